"""The rows of `capture report`, for `capture.report.figures`: the store's aggregates
(`capture.store.report_queries`) over the report's period, split into whole rollup buckets and
raw edges here, as the report's row types.

With `SPANS` empty every figure is computed from the raw rows (the tests compare both).
"""

from __future__ import annotations

from capture.connection import sqlite3
from capture.report.figures import BY_CHOICES
from capture.report.periods import split
from capture.report.rows import (
    CountRow,
    Counts,
    EpisodeTestRow,
    LostReasonRow,
    ReportRows,
    RetentionRow,
    TestRunRow,
    UndoneFileRow,
)
from capture.store import report_queries
from capture.store.proposal_rollups import SPANS
from capture.store.report_queries import (
    EPISODES_RAW_SQL,
    Parts,
    Scope,
    workspace_id_of,
    workspace_roots,
)

__all__ = ["EPISODES_RAW_SQL", "Scope", "fetch_rows", "workspace_id_of", "workspace_roots"]


def _parts(scope: Scope, by: str | None) -> Parts:
    """(current?, whole rollup buckets, raw edge ranges) for the previous period, then the
    current one. A span serves a grouping by local day only where local days start on its
    bucket edges (UTC days: only where local time is UTC)."""
    spans = tuple(s for s in SPANS if by not in ("day", "week") or scope.utc_offset % s == 0)
    parts = []
    for current, lo, hi in (
        (False, scope.previous_since, scope.since),
        (True, scope.since, scope.until),
    ):
        buckets, raw = split(lo, hi, spans)
        parts.append((current, buckets, raw))
    return parts


def _fetch_counts(conn: sqlite3.Connection, scope: Scope, by: str | None) -> list[CountRow]:
    return [
        CountRow(key, current, Counts(*counts))
        for key, current, counts in report_queries.count_rows(conn, scope, by, _parts(scope, by))
    ]


def _fetch_retention(conn: sqlite3.Connection, scope: Scope, by: str | None) -> list[RetentionRow]:
    rows = report_queries.retention_rows(conn, scope, by, _parts(scope, by))
    return [RetentionRow(*row) for row in rows]


def _fetch_test_runs(
    conn: sqlite3.Connection, scope: Scope, by: str | None
) -> list[TestRunRow] | None:
    rows = report_queries.test_run_rows(conn, scope, by, _parts(scope, by))
    return None if rows is None else [TestRunRow(*row) for row in rows]


def _fetch_episode_tests(
    conn: sqlite3.Connection, scope: Scope, by: str | None
) -> list[EpisodeTestRow] | None:
    rows = report_queries.episode_test_rows(conn, scope, by, rollups=bool(SPANS))
    return None if rows is None else [EpisodeTestRow(*row) for row in rows]


def fetch_rows(
    conn: sqlite3.Connection,
    scope: Scope,
    by: str | None,
    top: int,
    *,
    light: bool = False,
    episode_tests: list[EpisodeTestRow] | None = None,
) -> ReportRows:
    """The rows of one report grouped by `by` (None: the totals), keys as SQL gives them: agent
    and model names ('' for no model), extensions ('.py'), workspace ids, local day and week
    numbers (see `capture.report.periods`). `light`: proposal counts and retention only (what the
    page's charts need). Each episode falls in one group of any grouping, so the totals may
    reuse the `episode_tests` rows of another grouping instead of querying them again."""
    if by is not None and by not in BY_CHOICES:
        raise ValueError(f"cannot group by {by!r}")
    if light:
        return ReportRows(
            counts=_fetch_counts(conn, scope, by),
            retention=_fetch_retention(conn, scope, by),
            test_runs=None,
            episode_tests=None,
        )
    return ReportRows(
        counts=_fetch_counts(conn, scope, by),
        retention=_fetch_retention(conn, scope, by),
        test_runs=_fetch_test_runs(conn, scope, by),
        episode_tests=(
            episode_tests if episode_tests is not None else _fetch_episode_tests(conn, scope, by)
        ),
        undone_files=[
            UndoneFileRow(*row) for row in report_queries.undone_file_rows(conn, scope, by, top)
        ],
        lost_reasons=(
            [LostReasonRow(*row) for row in report_queries.lost_reason_rows(conn, scope)]
            if by is None
            else []
        ),
    )
