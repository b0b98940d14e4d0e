"""The report's pure parts: figures from rows, periods, languages, labels, the show timeline."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from capture.report.figures import (
    Change,
    build_report,
    figures_for,
    fold_tests,
    percentile,
    rank_undone,
)
from capture.report.formats import (
    change_text,
    format_count,
    format_rate,
    format_seconds,
    value_text,
)
from capture.report.languages import OTHER, language_of
from capture.report.periods import calendar, day_label, day_start, split, week_label
from capture.report.rows import (
    CountRow,
    Counts,
    EpisodeTestRow,
    Rate,
    ReportRows,
    RetentionRow,
    TestRunRow,
    UndoneFileRow,
)
from capture.report.timeline import episode_timeline, is_test_file, run_result


def test_rates_keep_their_parts() -> None:
    assert Rate(0, 0).value is None
    assert Rate(1, 4).value == 0.25
    c = Counts(n=10, shown=1, applied=7, rejected=2, kept=3, edited=1, undone=1, lost=1)
    assert c.settled == 6 and c.pending == 1
    assert c.acceptance == Rate(7, 9)
    assert c.outcome_rate("undone") == Rate(1, 6)


def test_split_into_days_quarter_hours_and_raw_edges() -> None:
    day, q = 86400, 900
    assert split(0.0, 2 * day, (day, q)) == ([(day, 0, 2)], [])
    # Day 0 00:10 .. day 2 00:20: day 1 whole, quarter hours around it, raw minutes outside.
    whole, raw = split(600.0, 2 * day + 1200.0, (day, q))
    assert whole == [(day, 1, 2), (q, 1, 96), (q, 192, 193)]
    assert raw == [(600.0, 900.0), (2 * day + 900.0, 2 * day + 1200.0)]
    # No whole day inside: quarter hours only.
    assert split(600.0, day + 1200.0, (day, q)) == (
        [(q, 1, 97)],
        [(600.0, 900.0), (day + 900.0, day + 1200.0)],
    )
    assert split(10.0, 20.0, (day, q)) == ([], [(10.0, 20.0)])
    assert split(5.0, 5.0, (day, q)) == ([], [])


@given(
    st.floats(min_value=0, max_value=40 * 86400, allow_nan=False),
    st.floats(min_value=0, max_value=40 * 86400, allow_nan=False),
)
def test_split_covers_the_period_exactly(a: float, b: float) -> None:
    lo, hi = min(a, b), max(a, b)
    whole, raw = split(lo, hi, (86400, 900))
    pieces = sorted([(s * f, s * e) for s, f, e in whole] + raw)
    covered = lo
    for start, end in pieces:
        assert start == covered and end > start
        covered = end
    assert covered == hi or (lo == hi and not pieces)


def test_languages_from_extensions() -> None:
    assert language_of("src/app.py") == "Python"
    assert language_of("stubs/x.PYI") == "Python"
    assert language_of("web/App.tsx") == "TypeScript"
    assert language_of("Makefile") == "Make"
    assert language_of("a/b/Dockerfile") == "Docker"
    assert language_of("README.md") == "Docs"
    assert language_of("LICENSE") == OTHER
    assert language_of("x.unknownext") == OTHER
    # What the rollups keep reads the same.
    assert language_of(".py") == "Python" and language_of("makefile") == "Make"


def test_day_and_week_labels() -> None:
    assert day_label(0) == "1970-01-01"
    assert week_label(0) == "1969-12-29"  # the Monday of the week holding 1970-01-01
    assert week_label((20513 + 3) // 7) == "2026-02-23"  # 2026-03-01 (day 20513), a Sunday
    assert day_start(20513 * 86400 + 3600.0, 0) == 20513 * 86400
    assert day_start(20513 * 86400 + 3600.0, -7200) == 20512 * 86400 + 7200  # 22:00 the day before
    assert calendar(20513 * 86400 + 10.0, 20516 * 86400.0, 0, "day") == [
        "2026-03-01",
        "2026-03-02",
        "2026-03-03",
    ]
    assert calendar(20513 * 86400.0, 20523 * 86400.0, 0, "week") == [
        "2026-02-23",
        "2026-03-02",
        "2026-03-09",
    ]


def _rows(current: bool, **counts: int) -> CountRow:
    return CountRow(counts.pop("key", "x"), current, Counts(**counts))


def test_build_report_folds_groups_and_compares() -> None:
    group = ReportRows(
        counts=[
            CountRow(".py", True, Counts(n=4, applied=4, kept=3, undone=1, chars_added=40)),
            CountRow(".pyi", True, Counts(n=1, applied=1, kept=1, chars_added=10)),
            CountRow(".ts", True, Counts(n=2, rejected=2)),
            CountRow(".py", False, Counts(n=2, applied=2, kept=1, undone=1)),
            CountRow(".go", False, Counts(n=5, applied=5)),  # only before: not a group now
        ],
        retention=[
            RetentionRow(".py", True, "30s", 30.0, 4, 0, 40, 30.0),
            RetentionRow(".pyi", True, "30s", 30.0, 1, 0, 10, 10.0),
            RetentionRow(".py", True, "late", 86400.0, 1, 1, 0, 0.0),
        ],
        test_runs=None,
        episode_tests=None,
        undone_files=[UndoneFileRow(".py", "/w", "a.py", 1, 3)],
    )
    total = ReportRows(
        counts=[CountRow("", True, Counts(n=7, applied=5, rejected=2, kept=4, undone=1))],
        retention=[
            RetentionRow("", True, "30s", 30.0, 5, 0, 50, 40.0),
            RetentionRow("", True, "late", 86400.0, 1, 1, 0, 0.0),
            RetentionRow("", False, "2m", 120.0, 1, 0, 10, 5.0),
        ],
        test_runs=[TestRunRow("", True, 3, 2, 1)],
        episode_tests=[
            EpisodeTestRow("", True, 30.0, episodes=1, failing=1, repaired=1),
            EpisodeTestRow("", True, 90.0, episodes=1, failing=1),
            EpisodeTestRow("", True, None, episodes=1),  # first edit or run unknown
            EpisodeTestRow("", False, 10.0, episodes=1),
        ],
    )
    report = build_report(
        since=100.0,
        until=200.0,
        by="language",
        workspace=None,
        total_rows=total,
        group_rows=group,
        label=lambda k: language_of(str(k)),
    )
    assert report.previous_since == 0.0
    assert report.windows == (("30s", 30.0), ("2m", 120.0), ("late", 86400.0))
    assert [p.current.key for p in report.groups] == ["Python", "TypeScript"]
    python = report.groups[0]
    assert python.current.counts == Counts(n=5, applied=5, kept=4, undone=1, chars_added=50)
    assert [w.rate for w in python.current.retention] == [Rate(40, 50), Rate(0, 0), Rate(0, 0)]
    assert python.current.retention[2].lost == 1
    assert python.current.tests is None
    assert [f.path for f in python.current.undone_files] == ["a.py"]
    changes = {c.figure.id: c for c in python.changes}
    assert changes["proposed"].delta == 3
    assert changes["kept_rate"].value == 0.8 and changes["kept_rate"].previous == 0.5
    assert changes["retention_30s"].previous is None  # nothing measured before
    assert report.groups[1].previous is None
    assert {c.figure.id: c.delta for c in report.groups[1].changes}["proposed"] is None
    tests = report.total.current.tests
    assert tests is not None
    assert (tests.runs, tests.with_result, tests.passed) == (3, 2, 1)
    assert (tests.episodes, tests.failing, tests.repaired, tests.timed) == (3, 2, 1, 2)
    assert (tests.first_test_median, tests.first_test_p90) == (60.0, 90.0)
    assert tests.delays == ((30.0, 1), (90.0, 1))
    assert tests.repairs == Rate(1, 2) and tests.pass_rate == Rate(1, 2)
    # The previous total exists (zeros) so counts compare; its rates are unknown.
    total_changes = {c.figure.id: c for c in report.total.changes}
    assert total_changes["proposed"].previous == 0 and total_changes["proposed"].delta == 7
    assert total_changes["kept_rate"].previous is None
    assert total_changes["test_runs"].previous == 0
    assert total_changes["first_test_median_s"].delta == 50.0


def test_empty_report() -> None:
    report = build_report(
        since=0.0,
        until=1.0,
        by="agent",
        workspace=None,
        total_rows=ReportRows(),
        group_rows=ReportRows(),
    )
    assert report.groups == ()
    assert report.total.current.counts == Counts()
    assert report.windows == ()
    assert all(c.delta in (0, None) for c in report.total.changes)


def test_most_undone_ranking() -> None:
    rows = [
        UndoneFileRow("k", "/w", "b.py", 2, 4),
        UndoneFileRow("k", "/w", "a.py", 2, 2),
        UndoneFileRow("k", "/w", "c.py", 5, 50),
        UndoneFileRow("k", "/w", "d.py", 0, 3),
        UndoneFileRow("j", "/v", "e.py", 1, 1),
    ]
    ranked = rank_undone(rows, str, 2)
    assert [f.path for f in ranked["k"]] == ["c.py", "a.py"]
    assert [f.path for f in ranked["j"]] == ["e.py"]


def test_formats() -> None:
    assert format_count(999) == "999"
    assert format_count(12_345) == "12.3k"
    assert format_count(1_234_567) == "1,235k"
    assert format_rate(Rate(2, 6)) == "33% 2/6"
    assert format_rate(Rate(0, 0)) == "-"
    assert format_seconds(None) == "-"
    assert format_seconds(4.25) == "4.2s"
    assert format_seconds(210.0) == "3m30s"
    assert format_seconds(7260.0) == "2h01m"


def _episode() -> dict:
    def cp(window: str, observed: str | None, outcome: str | None) -> dict:
        return {
            "window": window,
            "due_at": "2026-03-01T10:10:00.000Z",
            "observed_at": observed,
            "similarity": 1.0 if observed else None,
            "retention": 1.0 if observed else None,
            "outcome": outcome,
            "via": "editor",
        }

    base = {
        "chars_added": 5,
        "chars_removed": 0,
        "lines_added": 1,
        "lines_removed": 0,
        "tool": "Edit",
        "decided_by": None,
        "reason": None,
        "hunks": [{"old_text": "a\n", "new_text": "b\n", "status": "tracking"}],
    }
    return {
        "id": "e1",
        "agent": "claude-code",
        "model": "opus",
        "workspace": "/w",
        "prompt": "make it pass",
        "started_at": "2026-03-01T10:00:00.000Z",
        "settled_at": None,
        "proposals": [
            {
                **base,
                "file": "tests/test_x.py",
                "state": "applied",
                "outcome": "kept",
                "reason": "similarity 1.00 >= 0.9",
                "created_at": "2026-03-01T10:00:00.000Z",
                "applied_at": "2026-03-01T10:00:00.000Z",
                "settled_at": "2026-03-01T10:10:00.000Z",
                "checkpoints": [
                    cp("30s", "2026-03-01T10:00:30.000Z", "kept"),
                    cp("10m", "2026-03-01T10:10:00.000Z", "kept"),
                    cp("late", None, None),
                ],
            },
            {
                **base,
                "file": "src/x.py",
                "state": "rejected",
                "outcome": "rejected",
                "decided_by": "user",
                "created_at": "2026-03-01T10:01:00.000Z",
                "applied_at": None,
                "settled_at": "2026-03-01T10:02:00.000Z",
                "checkpoints": [],
            },
        ],
        "test_runs": [
            {
                "command": "pytest",
                "exit_code": 1,
                "passed": 3,
                "failed": 1,
                "errors": 0,
                "skipped": 0,
                "failing_ids": ["tests/test_x.py::test_a"],
                "started_at": "2026-03-01T10:05:00.000Z",
                "duration_s": 2.0,
            }
        ],
    }


def test_timeline_orders_what_happened() -> None:
    entries = episode_timeline(_episode())
    assert [e.kind for e in entries] == [
        "prompt",
        "proposal",
        "checkpoint",
        "proposal",
        "decision",
        "test_run",
        "checkpoint",
        "outcome",
        "late",
    ]
    assert entries[1].title == "#1 tests/test_x.py: applied via Edit (+5/-0 chars, 1 line(s))"
    assert entries[1].detail == ["@@ -1 +1 @@", "-a", "+b"]
    assert entries[4].title == "#2 rejected by user" and entries[4].tone == "bad"
    run = entries[5]
    assert "failed (3 passed, 1 failed), exit 1, 2.0s" in run.title
    assert "weak evidence" in run.title  # the agent edited a test file
    assert run.detail == ["  failing: tests/test_x.py::test_a"]
    # stored before rules were versioned: decided by version 1, and said so
    assert entries[7].title == "#1 outcome: kept — similarity 1.00 >= 0.9 (rules v1)"
    assert entries[8].at is None and "not observed yet" in entries[8].title
    assert episode_timeline(_episode(), diffs=False)[1].detail == []


def test_timeline_shows_reasons_rules_version_and_lateness() -> None:
    episode = _episode()
    first = episode["proposals"][0]
    first.update(outcome="undone", reason="old text back", rules_version=2)
    first["checkpoints"][1].update(
        outcome="undone", reason="old text back", rules_version=2, late_seconds=42.4
    )
    titles = [e.title for e in episode_timeline(episode)]
    assert "#1 outcome: undone — old text back (rules v2)" in titles
    (late_check,) = [t for t in titles if t.startswith("#1 10m check")]
    assert late_check.startswith("#1 10m check: undone — old text back (similarity")
    assert late_check.endswith("seen on editor, late by 42 s)")
    (on_time,) = [t for t in titles if t.startswith("#1 30s check")]
    assert "late by" not in on_time and " — " not in on_time


def test_test_files_and_run_results() -> None:
    assert is_test_file("tests/unit/test_a.py") and is_test_file("pkg/a_test.go")
    assert is_test_file("web/a.spec.ts") and is_test_file("src/FooTest.java")
    assert not is_test_file("src/testing_utils.py") and not is_test_file("src/app.py")
    assert run_result({"exit_code": 0, "failed": 0}) is True
    assert run_result({"exit_code": 0, "failed": 2}) is False
    assert run_result({"exit_code": None, "passed": 4, "failed": 0}) is True
    assert run_result({"exit_code": None}) is None


def test_changes_read_as_good_or_bad_news() -> None:
    figures = {f.id: f for f in figures_for((("30s", 30.0),))}

    def text(fid: str, value: float | None, previous: float | None) -> tuple[str, str]:
        return change_text(Change(figures[fid], value, previous))

    assert text("kept_rate", 0.75, 0.5) == ("+25.0 pp", "good")
    assert text("undone_rate", 0.25, 0.1) == ("+15.0 pp", "bad")
    assert text("retention_30s", 0.8, 0.9) == ("-10.0 pp", "bad")
    assert text("first_test_median_s", 30.0, 90.0) == ("-1m00s", "good")
    assert text("proposed", 12, 12) == ("±0", "neutral")
    assert text("proposed", 12, 2) == ("+10", "neutral")
    assert text("kept_rate", 0.5, None) == ("-", "none")
    assert value_text("rate", 0.456) == "46%" and value_text("count", None) == "-"


def test_counts_follow_the_rollup_columns() -> None:
    """Rollup rows are unpacked into Counts by position."""
    from dataclasses import fields

    from capture.store.proposal_rollups import COUNT_COLUMNS

    assert tuple(f.name for f in fields(Counts)) == COUNT_COLUMNS


def test_percentiles_from_counts() -> None:
    assert percentile([], 0.5) is None
    assert percentile([(5.0, 1)], 0.5) == 5.0
    assert percentile([(1.0, 1), (2.0, 1), (3.0, 1)], 0.5) == 2.0
    assert percentile([(1.0, 2), (3.0, 2)], 0.5) == 2.0  # 1 1 3 3
    assert percentile([(1.0, 3), (3.0, 1)], 0.5) == 1.0  # 1 1 1 3
    assert percentile([(float(i), 1) for i in range(1, 11)], 0.9) == 9.0  # nearest rank
    assert percentile([(1.0, 1), (4.0, 3)], 0.9) == 4.0


def test_episode_histograms_add_up_across_groups() -> None:
    rows = [
        EpisodeTestRow("a", True, 5.0, episodes=2, failing=1, repaired=1),
        EpisodeTestRow("b", True, 5.0, episodes=1),
        EpisodeTestRow("b", True, 9.0, episodes=1, failing=1),
    ]
    folded = fold_tests([], rows, lambda k: "")
    assert folded is not None
    t = folded[("", True)]
    assert (t.episodes, t.failing, t.repaired, t.timed) == (4, 2, 1, 4)
    assert t.delays == ((5.0, 3), (9.0, 1))
    assert t.first_test_median == 5.0 and t.first_test_p90 == 9.0


def test_a_period_with_test_runs_only() -> None:
    """Edits made before the period, their test runs inside it: the runs still count."""
    rows = ReportRows(
        test_runs=[TestRunRow("", True, 2, 2, 1)],
        episode_tests=[],
    )
    report = build_report(
        since=0.0,
        until=1.0,
        by="day",
        workspace=None,
        total_rows=rows,
        group_rows=ReportRows(test_runs=[TestRunRow(20513, True, 2, 2, 1)], episode_tests=[]),
        label=lambda k: day_label(int(k)),
    )
    tests = report.total.current.tests
    assert tests is not None and tests.runs == 2 and tests.pass_rate == Rate(1, 2)
    assert [p.current.key for p in report.groups] == ["2026-03-01"]
    assert report.groups[0].current.counts == Counts()
