"""Late signals from plain values: commits, file texts, messages."""

from __future__ import annotations

import pytest

from capture.recording.late_syntax import syntax_errors
from capture.tiers.late_signals import (
    DAY,
    Commit,
    FileAtCommit,
    added_lines,
    file_commits,
    is_fix_message,
    markers_added,
    measure,
    revert_subject,
    reverted_shas,
)

OLD = "def total(items):\n    return 0\n"
BODY = "    result = 0\n    for item in items:\n        result += item\n    return result\n"
NEW = "def total(items):\n" + BODY
HUNKS = (
    (
        "    return 0\n",
        "    result = 0\n    for item in items:\n        result += item\n    return result\n",
    ),
)
LINES = added_lines(HUNKS)


def at(sha: str, days: float, text: str | None, message: str = "change") -> FileAtCommit:
    return FileAtCommit(sha * 40, days * DAY, "calc.py", text, message)


def test_added_lines_are_the_new_lines_not_in_the_old_stripped_as_a_multiset() -> None:
    assert LINES == ["result = 0", "for item in items:", "result += item", "return result"]
    assert added_lines([("a\nb\n", "  a\nb\nb\n\n")]) == ["b"]


def test_lines_the_file_already_held_are_not_taken_for_the_agents_commit() -> None:
    base = "def total(items):\n    result = 0\n    return result\n"
    lines = added_lines([("    return 0\n", "    result = 0\n    return result\n")])
    # A commit touching the file without the agent's edit: its copies are the base's.
    other = measure(
        lines=lines,
        old_text="    return 0\n",
        history=[at("a", 1, base + "# x\n")],
        base=base,
        now=2 * DAY,
    )
    assert other.commit is None
    both = base + "    result = 0\n    return result\n"
    s = measure(lines=lines, old_text="", history=[at("b", 1, both)], base=base, now=2 * DAY)
    assert (s.commit, s.committed) == ("b" * 40, 2)


def test_not_committed_and_file_deleted_before_any_commit() -> None:
    s = measure(lines=LINES, old_text="    return 0\n", history=[at("a", 1, OLD)], now=2 * DAY)
    assert s.commit is None and s.committed == 0 and not s.file_gone
    gone = measure(lines=LINES, old_text="", history=[at("a", 1, None)], now=2 * DAY)
    assert gone.file_gone


def test_survival_to_commit_and_churn_in_each_window() -> None:
    partly = NEW.replace("    return result\n", "    return int(result)\n")
    history = [
        at("a", 1, OLD.replace("return 0", "return -1")),  # before the agent's lines landed
        at("b", 2, NEW),
        at("c", 10, partly),  # one line of four changed on day 10
        at("d", 25, OLD),  # all gone by day 25
    ]
    s = measure(
        lines=LINES, old_text="    return 0\n", history=history, path="calc.py", now=40 * DAY
    )
    assert (s.commit, s.committed, s.lines, s.renamed) == ("b" * 40, 4, 4, False)
    moved = measure(lines=LINES, old_text="", history=history, path="old/calc.py", now=40 * DAY)
    assert moved.renamed
    assert s.churn_14d == 0.25
    assert s.churn_30d == 1.0
    assert s.days_observed == 38.0
    # day 25's commit brought the old line back and took every agent line: reverted, by lines
    assert (s.reverted_by, s.revert_kind) == ("d" * 40, "lines back")


def test_a_revert_commit_naming_the_carrier_or_its_subject() -> None:
    history = [at("b", 1, NEW, "calc: sum")]
    later = [
        ("e" * 40, 2 * DAY, "docs"),
        ("r" * 40, 8 * DAY, f"Revert x\n\nThis reverts commit {'b' * 12}."),
    ]
    s = measure(lines=LINES, old_text="", history=history, later_commits=later, now=9 * DAY)
    assert (s.reverted_by, s.reverted_at, s.revert_kind) == ("r" * 40, 8 * DAY, "revert commit")
    by_subject = [("r" * 40, 3 * DAY, 'Revert "calc: sum"')]
    s = measure(lines=LINES, old_text="", history=history, later_commits=by_subject, now=9 * DAY)
    assert s.reverted_by == "r" * 40
    other = [("r" * 40, 3 * DAY, f"This reverts commit {'f' * 40}.")]
    s = measure(lines=LINES, old_text="", history=history, later_commits=other, now=9 * DAY)
    assert s.reverted_by is None


def test_the_first_fix_counts_and_the_shells_syntax_count_is_kept() -> None:
    history = [at("b", 1, NEW)]
    fixes = [("g" * 40, 9 * DAY), ("f" * 40, 4 * DAY)]
    s = measure(
        lines=LINES, old_text="", history=history, fixes=fixes, syntax_errors_added=3, now=10 * DAY
    )
    assert (s.fixed_by, s.fixed_at, s.syntax_errors_added) == ("f" * 40, 4 * DAY, 3)


@pytest.mark.parametrize(
    ("message", "fix"),
    [
        ("Fix off-by-one in total", True),
        ("calc: fixes #12", True),
        ("hotfix: total", True),
        ("Regression in total", True),
        ("Add prefix option", False),
        ("Refactor suffix handling", False),
        ('Revert "fix total"', False),
        ("fix(parser): accept empty input", True),
        ("feat: add totals\n\nFixes a regression the old code had; adds regression tests", False),
        ("Add totals\n\nThis fixes the bug where totals were off", False),
        ("Add regression tests for totals", False),
        ("test: cover the fix of #12", False),
    ],
)
def test_fix_messages(message: str, fix: bool) -> None:
    assert is_fix_message(message) is fix


def test_revert_message_parts() -> None:
    assert reverted_shas("x\n\nThis reverts commit ABCDEF1234.") == ["abcdef1234"]
    assert revert_subject('Revert "calc: sum"\n\nbody') == "calc: sum"
    assert revert_subject("Reverted stuff") is None


def test_markers_added_beyond_those_the_edit_removed() -> None:
    assert markers_added(["x = 1  # TODO: tidy", "# FIXME and HACK"], "# TODO old\n") == 2
    assert markers_added(["x = 1"], "") == 0
    assert markers_added(["todo = 1"], "") == 0  # the marker words are upper case


def test_file_commits_follow_renames_forward_and_see_deletions() -> None:
    commits = [
        Commit("1", 1, "m", (("M", "other.py", "other.py"),)),
        Commit("2", 2, "m", (("M", "calc.py", "calc.py"),)),
        Commit("3", 3, "m", (("R", "calc.py", "lib/calc.py"),)),
        Commit("4", 4, "m", (("M", "calc.py", "calc.py"),)),  # a new file of the old name
        Commit("5", 5, "m", (("M", "lib/calc.py", "lib/calc.py"),)),
        Commit("6", 6, "m", (("D", "lib/calc.py", "lib/calc.py"),)),
    ]
    got = [(c.sha, path, deleted) for c, path, deleted in file_commits("calc.py", commits)]
    assert got == [
        ("2", "calc.py", False),
        ("3", "lib/calc.py", False),
        ("5", "lib/calc.py", False),
        ("6", "lib/calc.py", True),
    ]


def test_syntax_errors_by_language_and_none_without_a_grammar() -> None:
    assert syntax_errors("a.py", "def f(x):\n    return x\n") == 0
    assert syntax_errors("a.py", "def f(x:\n    return x\n") >= 1  # type: ignore[operator]
    assert syntax_errors("a.ts", "const x: number = 1;\n") == 0
    assert syntax_errors("a.js", "function f( {\n") >= 1  # type: ignore[operator]
    assert syntax_errors("a.tsx", "const a = <div>{x}</div>;\n") == 0
    assert syntax_errors("notes.txt", "anything") is None
