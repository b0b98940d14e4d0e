from __future__ import annotations

import json
from pathlib import Path

import pytest

from capture.errors import InputError
from capture.hunks import context_around, count_change, locate
from capture.model import HunkInput, State
from capture.propose import parse_proposal
from capture.unidiff import parse_unified_diff


def test_unified_diff_hunks_drop_context() -> None:
    diff = (
        "--- a/src/m.py\n+++ b/src/m.py\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n-d\n e\n"
        "@@ -10,2 +10,3 @@\n x\n+y\n z\n"
    )
    target, hunks = parse_unified_diff(diff)
    assert target == "src/m.py"
    assert [(h.old_text, h.new_text, h.line) for h in hunks] == [
        ("b\n", "B\n", 2),
        ("d\n", "", 4),
        ("", "y\n", 11),
    ]


def test_unified_diff_without_hunks_is_an_error() -> None:
    with pytest.raises(InputError):
        parse_unified_diff("just text")


def test_no_newline_marker() -> None:
    _, hunks = parse_unified_diff("@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n")
    assert (hunks[0].old_text, hunks[0].new_text) == ("a", "b\n")


def test_parse_proposal_defaults(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    raw = json.dumps({"file": "a.py", "old_text": "1", "new_text": "2"}).encode()
    proposal = parse_proposal(raw, tmp_path)
    assert proposal.path == str((tmp_path / "a.py").resolve())
    assert proposal.workspace == str(tmp_path.resolve())
    assert proposal.state is State.APPLIED and proposal.agent == "cli"


def test_parse_proposal_rejects_mixed_hunk_forms(tmp_path: Path) -> None:
    raw = json.dumps({"file": "a.py", "new_text": "2", "diff": "@@ -1 +1 @@\n-a\n+b\n"})
    with pytest.raises(InputError, match="exactly one"):
        parse_proposal(raw.encode(), tmp_path)


def test_locate_prefers_given_line_then_nearest() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    (first,) = locate(text, [HunkInput("", "x = 1\n", line=3)])
    assert first.span == (12, 18)
    (found,) = locate(text, [HunkInput("", "y = 2\n")])
    assert found.span == (6, 12)
    assert found.context_before == "x = 1\n" and found.context_after == "x = 1\n"
    (missing,) = locate(text, [HunkInput("", "zzz")])
    assert missing.span is None


def test_context_is_three_lines() -> None:
    text = "".join(f"{c}\n" for c in "abcdefgh")
    assert context_around(text, 8, 10) == ("b\nc\nd\n", "f\ng\nh\n")


def test_count_change() -> None:
    change = count_change("a\nb\nc\n", "a\nB\nc\nd\n")
    assert (change.lines_added, change.lines_removed) == (2, 1)
    assert (change.chars_added, change.chars_removed) == (3, 1)
