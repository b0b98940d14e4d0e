"""The report's figures: pure functions over the plain rows (`capture.report.rows`) that
`capture.report.queries` fetches.

Definitions (docs/report.md documents them for users):

- proposed = every proposal; applied, rejected, undecided (shown, no decision yet) by state;
  acceptance = applied / (applied + rejected).
- settled = applied proposals with a final outcome (kept + edited + undone + lost); pending =
  applied - settled. Each outcome rate is that outcome / settled; the kept and undone rates
  are also given over observed proposals (that outcome / (settled - lost)).
- chars and lines added: by applied proposals. Retention at a window = characters of the agent's
  still present at that checkpoint / characters added by the proposals observed there (lost
  regions count as observed, with no characters measured).
- test runs after agent edits: runs linked to an episode with an applied edit; a run passed when
  its exit code is 0 and it reported no failure or error (without an exit code: when it reported
  no failure or error); pass rate = passed / runs with a result.
- repairs: episodes in which a linked run of some command failed and a later linked run of the
  same command passed, over the episodes with a failing linked run.
- first test: per episode with linked runs, the time from its first applied edit to its first
  linked run, rounded to the second; median (mean of the two middle values for an even count)
  and 90th percentile (nearest rank).
- change: each figure's value minus its value in the previous period of the same length (rates
  in fractions, so 0.05 is five percentage points).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from capture.edits.windows import LATE
from capture.report.rows import (
    CountRow,
    Counts,
    EpisodeTestRow,
    Key,
    Rate,
    ReportRows,
    RetentionRow,
    TestRunRow,
    UndoneFileRow,
)

__all__ = [
    "BY_CHOICES",
    "Change",
    "Figure",
    "Group",
    "GroupPair",
    "Report",
    "TestFigures",
    "UndoneFile",
    "WindowRetention",
    "build_report",
    "percentile",
    "changes",
    "figures_for",
    "fold_counts",
    "fold_retention",
    "fold_tests",
    "rank_undone",
    "retention_curve",
]

BY_CHOICES = ("agent", "model", "language", "workspace", "day", "week")
TOP_FILES_TOTAL = 10
TOP_FILES_GROUP = 5

# -- figures --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WindowRetention:
    window: str
    seconds: float
    observed: int = 0
    lost: int = 0
    measured_chars: int = 0
    survived_chars: float = 0.0

    @property
    def rate(self) -> Rate:
        return Rate(round(self.survived_chars), self.measured_chars)


@dataclass(frozen=True, slots=True)
class TestFigures:
    __test__ = False  # not a pytest class, whatever its name

    runs: int = 0
    with_result: int = 0
    passed: int = 0
    episodes: int = 0
    failing: int = 0
    repaired: int = 0
    delays: tuple[tuple[float, int], ...] = ()  # (seconds, episodes), by seconds

    @property
    def timed(self) -> int:
        return sum(n for _, n in self.delays)

    @property
    def first_test_median(self) -> float | None:
        return percentile(self.delays, 0.5)

    @property
    def first_test_p90(self) -> float | None:
        return percentile(self.delays, 0.9)

    @property
    def pass_rate(self) -> Rate:
        return Rate(self.passed, self.with_result)

    @property
    def repairs(self) -> Rate:
        return Rate(self.repaired, self.failing)


@dataclass(frozen=True, slots=True)
class UndoneFile:
    workspace: str
    path: str
    undone: int
    settled: int

    @property
    def rate(self) -> Rate:
        return Rate(self.undone, self.settled)


@dataclass(frozen=True, slots=True)
class Group:
    key: str
    counts: Counts
    retention: tuple[WindowRetention, ...]
    tests: TestFigures | None
    undone_files: tuple[UndoneFile, ...] = ()
    lost_reasons: tuple[tuple[str, int], ...] = ()  # (reason, proposals), the totals only


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure that the report compares with the previous period."""

    id: str
    label: str
    kind: Literal["count", "rate", "seconds"]
    get: Callable[[Group], float | None]


@dataclass(frozen=True, slots=True)
class Change:
    figure: Figure
    value: float | None
    previous: float | None

    @property
    def delta(self) -> float | None:
        if self.value is None or self.previous is None:
            return None
        return self.value - self.previous


@dataclass(frozen=True, slots=True)
class GroupPair:
    current: Group
    previous: Group | None
    changes: tuple[Change, ...]


@dataclass(frozen=True, slots=True)
class Report:
    since: float
    until: float
    by: str | None
    workspace: str | None
    windows: tuple[tuple[str, float], ...]
    total: GroupPair
    groups: tuple[GroupPair, ...]
    utc_offset: int = 0  # local days and weeks: see capture.report.periods

    @property
    def previous_since(self) -> float:
        return self.since - (self.until - self.since)


# -- pure functions -------------------------------------------------------------------------


def percentile(counts: Sequence[tuple[float, int]], q: float) -> float | None:
    """Of values given as (value, how many) sorted by value: the median for q=0.5 (the mean of
    the two middle values when their count is even), else the nearest-rank percentile."""
    n = sum(c for _, c in counts)
    if n == 0:
        return None

    def nth(rank: int) -> float:  # 1-based
        seen = 0
        for value, c in counts:
            seen += c
            if seen >= rank:
                return value
        raise AssertionError(rank)

    if q == 0.5:
        return (nth((n + 1) // 2) + nth(n // 2 + 1)) / 2
    return nth(max(math.ceil(q * n), 1))


def _cached(label: Callable[[Key], str]) -> Callable[[Key], str]:
    """Labels are computed once per key: day labels of thousands of rows add up."""
    names: dict[Key, str] = {}

    def name(key: Key) -> str:
        found = names.get(key)
        if found is None:
            found = names[key] = label(key)
        return found

    return name


def fold_counts(
    rows: Iterable[CountRow], label: Callable[[Key], str]
) -> dict[tuple[str, bool], Counts]:
    label = _cached(label)
    folded: dict[tuple[str, bool], Counts] = defaultdict(Counts)
    for row in rows:
        k = (label(row.key), row.current)
        folded[k] = folded[k] + row.counts
    return dict(folded)


def _window_order(window: str, seconds: float) -> tuple[int, float, str]:
    return (1 if window == LATE else 0, seconds, window)


def fold_retention(
    rows: Iterable[RetentionRow], label: Callable[[Key], str]
) -> dict[tuple[str, bool], dict[tuple[str, float], WindowRetention]]:
    label = _cached(label)
    folded: dict[tuple[str, bool], dict[tuple[str, float], WindowRetention]] = defaultdict(dict)
    for row in rows:
        per_window = folded[(label(row.key), row.current)]
        w = (row.window, row.seconds)
        old = per_window.get(w, WindowRetention(row.window, row.seconds))
        per_window[w] = WindowRetention(
            row.window,
            row.seconds,
            old.observed + row.observed,
            old.lost + row.lost,
            old.measured_chars + row.measured_chars,
            old.survived_chars + row.survived_chars,
        )
    return dict(folded)


def retention_curve(
    per_window: dict[tuple[str, float], WindowRetention], windows: Sequence[tuple[str, float]]
) -> tuple[WindowRetention, ...]:
    """One point per report window, in window order (the late check last)."""
    return tuple(per_window.get(w, WindowRetention(*w)) for w in windows)


def fold_tests(
    runs: Iterable[TestRunRow] | None,
    episodes: Iterable[EpisodeTestRow] | None,
    label: Callable[[Key], str],
) -> dict[tuple[str, bool], TestFigures] | None:
    if runs is None or episodes is None:
        return None
    label = _cached(label)
    sums: dict[tuple[str, bool], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    delays: dict[tuple[str, bool], dict[float, int]] = defaultdict(dict)
    for r in runs:
        a = sums[(label(r.key), r.current)]
        a[0] += r.runs
        a[1] += r.with_result
        a[2] += r.passed
    for e in episodes:
        k = (label(e.key), e.current)
        a = sums[k]
        a[3] += e.episodes
        a[4] += e.failing
        a[5] += e.repaired
        if e.delay is not None and e.delay >= 0:
            delays[k][e.delay] = delays[k].get(e.delay, 0) + e.episodes
    return {
        k: TestFigures(
            runs=a[0],
            with_result=a[1],
            passed=a[2],
            episodes=a[3],
            failing=a[4],
            repaired=a[5],
            delays=tuple(sorted(delays[k].items())) if k in delays else (),
        )
        for k, a in sums.items()
    }


def rank_undone(
    rows: Iterable[UndoneFileRow], label: Callable[[Key], str], top: int
) -> dict[str, tuple[UndoneFile, ...]]:
    """The `top` most-undone files per group: most undone first, then by workspace and path (the
    order the SQL ranks them in, so its per-group cut agrees)."""
    label = _cached(label)
    per_group: dict[str, list[UndoneFile]] = defaultdict(list)
    for r in rows:
        if r.undone > 0:
            per_group[label(r.key)].append(UndoneFile(r.workspace, r.path, r.undone, r.settled))
    return {
        k: tuple(
            sorted(
                files,
                key=lambda f: (-f.undone, f.workspace, f.path),
            )[:top]
        )
        for k, files in per_group.items()
    }


def figures_for(windows: Sequence[tuple[str, float]]) -> tuple[Figure, ...]:
    """The figures compared with the previous period; ids are stable (the JSON uses them)."""

    def count(name: str) -> Callable[[Group], float | None]:
        return lambda g: getattr(g.counts, name)

    def outcome(
        name: Literal["kept", "edited", "undone", "lost"],
    ) -> Callable[[Group], float | None]:
        return lambda g: g.counts.outcome_rate(name).value

    def retention_at(i: int) -> Callable[[Group], float | None]:
        return lambda g: g.retention[i].rate.value if i < len(g.retention) else None

    def tests(get: Callable[[TestFigures], float | None]) -> Callable[[Group], float | None]:
        return lambda g: None if g.tests is None else get(g.tests)

    result = [
        Figure("proposed", "proposed", "count", count("n")),
        Figure("applied", "applied", "count", count("applied")),
        Figure("rejected", "rejected", "count", count("rejected")),
        Figure("acceptance", "acceptance", "rate", lambda g: g.counts.acceptance.value),
        Figure("settled", "settled", "count", lambda g: g.counts.settled),
        Figure("kept_rate", "kept", "rate", outcome("kept")),
        Figure("edited_rate", "edited", "rate", outcome("edited")),
        Figure("undone_rate", "undone", "rate", outcome("undone")),
        Figure("lost_rate", "lost", "rate", outcome("lost")),
        Figure(
            "kept_rate_observed",
            "kept of observed",
            "rate",
            lambda g: g.counts.observed_rate("kept").value,
        ),
        Figure(
            "undone_rate_observed",
            "undone of observed",
            "rate",
            lambda g: g.counts.observed_rate("undone").value,
        ),
        Figure("chars_added", "chars added", "count", count("chars_added")),
        Figure("lines_added", "lines added", "count", count("lines_added")),
    ]
    result += [
        Figure(f"retention_{w}", f"retention at {w}", "rate", retention_at(i))
        for i, (w, _) in enumerate(windows)
    ]
    result += [
        Figure("test_runs", "test runs after edits", "count", tests(lambda t: t.runs)),
        Figure("test_pass_rate", "test pass rate", "rate", tests(lambda t: t.pass_rate.value)),
        Figure("repair_rate", "repairs", "rate", tests(lambda t: t.repairs.value)),
        Figure(
            "first_test_median_s",
            "first test (median)",
            "seconds",
            tests(lambda t: t.first_test_median),
        ),
    ]
    return tuple(result)


def changes(
    current: Group, previous: Group | None, figures: Sequence[Figure]
) -> tuple[Change, ...]:
    return tuple(
        Change(f, f.get(current), None if previous is None else f.get(previous)) for f in figures
    )


def _windows(rows: Iterable[RetentionRow]) -> tuple[tuple[str, float], ...]:
    seen = {(r.window, r.seconds) for r in rows}
    return tuple(sorted(seen, key=lambda w: _window_order(*w)))


def build_report(
    *,
    since: float,
    until: float,
    by: str | None,
    workspace: str | None,
    total_rows: ReportRows,
    group_rows: ReportRows | None = None,
    label: Callable[[Key], str] = str,
    utc_offset: int = 0,
) -> Report:
    """Assemble the report. `total_rows` were fetched ungrouped (key ''); `group_rows` with the
    grouping `by`, whose keys `label` turns into group names (rows whose keys share a label are
    added up: extensions into languages)."""
    windows = _windows(total_rows.retention)
    figures = figures_for(windows)

    def pairs(rows: ReportRows, name: Callable[[Key], str], top: int) -> list[GroupPair]:
        counts = fold_counts(rows.counts, name)
        retention = fold_retention(rows.retention, name)
        tests = fold_tests(rows.test_runs, rows.episode_tests, name)
        undone = rank_undone(rows.undone_files, name, top)
        lost = tuple((r.reason, r.count) for r in rows.lost_reasons)
        seen = {*counts, *retention, *(tests or {})}
        keys = sorted({k for (k, current) in seen if current})

        def group(key: str, current: bool) -> Group | None:
            if (key, current) not in seen:
                return None
            return Group(
                key=key,
                counts=counts.get((key, current), Counts()),
                retention=retention_curve(retention.get((key, current), {}), windows),
                tests=None if tests is None else tests.get((key, current), TestFigures()),
                undone_files=undone.get(key, ()) if current else (),
                lost_reasons=lost if current else (),
            )

        out = []
        for key in keys:
            cur = group(key, True)
            assert cur is not None
            prev = group(key, False)
            out.append(GroupPair(cur, prev, changes(cur, prev, figures)))
        return out

    empty = Group("", Counts(), retention_curve({}, windows), TestFigures())
    found = pairs(total_rows, lambda _: "", TOP_FILES_TOTAL)
    current = found[0].current if found else empty
    # An empty previous period is zeros, not unknown: "12 proposed, +12".
    previous = (found[0].previous if found else None) or empty
    total = GroupPair(current, previous, changes(current, previous, figures))
    groups: list[GroupPair] = []
    if by is not None and group_rows is not None:
        groups = pairs(group_rows, label, TOP_FILES_GROUP)
        if by not in ("day", "week"):
            groups.sort(key=lambda p: (-p.current.counts.n, p.current.key))
    return Report(
        since=since,
        until=until,
        by=by,
        workspace=workspace,
        windows=windows,
        total=total,
        groups=tuple(groups),
        utc_offset=utc_offset,
    )
