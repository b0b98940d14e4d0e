"""The SQL behind `capture report`: each figure's sums per group and period, as plain tuples
(`capture.report.queries` makes them the report's rows).

Proposal counts, retention and test runs come from the rollups kept by triggers
(`capture.store.proposal_rollups`, `capture.store.run_rollups`): the whole buckets of a period
from them, its partial edges from the raw rows (the caller splits the period: `Parts`), so
figures are exact and cost what the period holds in buckets, not in proposals. Each episode's
test history comes from its `report_episodes` row; the most-undone files from the undone
proposals alone (a partial index). Besides the rollups, only tables of the first schema version
are read, so a database that later migrations extend reports the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from capture.connection import sqlite3
from capture.store.proposal_rollups import COUNT_COLUMNS, RETENTION_COLUMNS, ext_sql
from capture.store.run_rollups import run_passed_sql

__all__ = [
    "EPISODES_RAW_SQL",
    "Parts",
    "Scope",
    "count_rows",
    "episode_test_rows",
    "lost_reason_rows",
    "retention_rows",
    "test_run_rows",
    "today_counts",
    "undone_file_rows",
    "workspace_id_of",
    "workspace_roots",
]

_SETTLED = "('kept', 'edited', 'undone', 'lost')"

# 1 passed, 0 failed, NULL when the run told nothing either way.
_RUN_PASSED = run_passed_sql("t")

#: A period's parts: (current period?, whole rollup buckets as (span, first, end), raw edges as
#: [lo, hi)), for the period before the report's, then for the report's own.
Parts = Sequence[tuple[bool, Sequence[tuple[int, int, int]], Sequence[tuple[float, float]]]]


@dataclass(frozen=True, slots=True)
class Scope:
    """What one report covers: [since, until) and the period of the same length before it, one
    workspace (its id) or all (None); local days start `utc_offset` seconds off UTC."""

    since: float
    until: float
    workspace_id: int | None = None
    utc_offset: int = 0

    @property
    def previous_since(self) -> float:
        return self.since - (self.until - self.since)


def _day(ts: str) -> str:
    return f"CAST(({ts} + :offset) / 86400 AS INTEGER)"


def _week(ts: str) -> str:
    # 1970-01-01 was a Thursday: shifting by 3 days makes weeks start on Monday.
    return f"(({_day(ts)} + 3) / 7)"


def _rollup_key(by: str | None) -> tuple[str, str]:
    """(rollup dimension, key expression over it)."""
    start = "bucket * span"
    return {
        None: ("all", "''"),
        "agent": ("agent", "value"),
        "model": ("model", "value"),
        "language": ("ext", "value"),
        "workspace": ("all", "workspace_id"),
        "day": ("all", _day(start)),
        "week": ("all", _week(start)),
    }[by]


def _proposal_key(by: str | None) -> str:
    return {
        None: "''",
        "agent": "p.agent",
        "model": "coalesce(p.model, '')",
        "language": ext_sql("p.path"),
        "workspace": "coalesce(p.workspace_id, 0)",
        "day": _day("p.created_at"),
        "week": _week("p.created_at"),
    }[by]


def count_rows(
    conn: sqlite3.Connection, scope: Scope, by: str | None, parts: Parts
) -> list[tuple[Any, bool, tuple[int, ...]]]:
    """(key, current?, counts in `COUNT_COLUMNS` order) per group and period part."""
    dim, key = _rollup_key(by)
    ws = " AND workspace_id = :ws" if scope.workspace_id is not None else ""
    sums = ", ".join(f"sum({c})" for c in COUNT_COLUMNS)
    rollup_sql = f"""SELECT {key} AS k, {sums} FROM report_counts
        WHERE dim = :dim AND span = :span AND bucket >= :lo AND bucket < :hi{ws} GROUP BY k"""
    raw_ws = " AND coalesce(p.workspace_id, 0) = :ws" if scope.workspace_id is not None else ""
    raw_sql = f"""SELECT {_proposal_key(by)} AS k, count(*), sum(p.state = 'shown'),
        sum(p.state = 'applied'), sum(p.state = 'rejected'), sum(p.outcome = 'kept'),
        sum(p.outcome = 'edited'), sum(p.outcome = 'undone'), sum(p.outcome = 'lost'),
        sum(CASE WHEN p.state = 'applied' THEN p.chars_added ELSE 0 END),
        sum(CASE WHEN p.state = 'applied' THEN p.lines_added ELSE 0 END)
        FROM proposals p WHERE p.created_at >= :lo AND p.created_at < :hi{raw_ws} GROUP BY k"""
    rows: list[tuple[Any, bool, tuple[int, ...]]] = []
    base: dict[str, Any] = {"dim": dim, "ws": scope.workspace_id, "offset": scope.utc_offset}
    for current, buckets, raw in parts:
        queries = [(raw_sql, 0, lo, hi) for lo, hi in raw]
        queries += [(rollup_sql, span, lo, hi) for span, lo, hi in buckets]
        for sql, span, lo, hi in queries:
            for r in conn.execute(sql, {**base, "span": span, "lo": lo, "hi": hi}):
                rows.append((r[0], current, tuple(int(v or 0) for v in r[1:])))
    return rows


def retention_rows(
    conn: sqlite3.Connection, scope: Scope, by: str | None, parts: Parts
) -> list[tuple[Any, bool, str, float, int, int, int, float]]:
    """(key, current?, window, window seconds, checkpoints observed, lost, chars measured,
    chars surviving) per group, window and period part."""
    dim, key = _rollup_key(by)
    ws = " AND workspace_id = :ws" if scope.workspace_id is not None else ""
    sums = ", ".join(f"sum({c})" for c in RETENTION_COLUMNS)
    rollup_sql = f"""SELECT {key} AS k, window, window_seconds, {sums} FROM report_retention
        WHERE dim = :dim AND span = :span AND bucket >= :lo AND bucket < :hi{ws}
        GROUP BY k, window, window_seconds"""
    raw_ws = " AND coalesce(p.workspace_id, 0) = :ws" if scope.workspace_id is not None else ""
    raw_sql = f"""SELECT {_proposal_key(by)} AS k, c.window, c.window_seconds, count(*),
        sum(c.retention IS NULL),
        sum(CASE WHEN c.retention IS NULL THEN 0 ELSE p.chars_added END),
        sum(coalesce(c.retention * p.chars_added, 0.0))
        FROM proposals p JOIN checkpoints c ON c.proposal_id = p.id
        WHERE p.created_at >= :lo AND p.created_at < :hi AND c.observed_at IS NOT NULL{raw_ws}
        GROUP BY k, c.window, c.window_seconds"""
    rows: list[tuple[Any, bool, str, float, int, int, int, float]] = []
    base: dict[str, Any] = {"dim": dim, "ws": scope.workspace_id, "offset": scope.utc_offset}
    for current, buckets, raw in parts:
        queries = [(raw_sql, 0, lo, hi) for lo, hi in raw]
        queries += [(rollup_sql, span, lo, hi) for span, lo, hi in buckets]
        for sql, span, lo, hi in queries:
            for r in conn.execute(sql, {**base, "span": span, "lo": lo, "hi": hi}):
                if not r[3]:
                    continue  # a bucket whose checkpoints were all removed again
                rows.append(
                    (r[0], current, r[1], float(r[2]), int(r[3]), int(r[4]), int(r[5]), float(r[6]))
                )
    return rows


def _run_key(by: str | None) -> tuple[str, str, str] | None:
    """(rollup dimension, key over report_tests, key over a raw run `t` and its episode `e`);
    None when runs cannot be split that way."""
    start = "bucket * span"
    return {
        None: ("all", "''", "''"),
        "agent": ("agent", "value", "e.agent"),
        "model": ("model", "value", "coalesce(e.model, '')"),
        "language": None,
        "workspace": ("all", "workspace_id", "coalesce(t.workspace_id, 0)"),
        "day": ("all", _day(start), _day("t.started_at")),
        "week": ("all", _week(start), _week("t.started_at")),
    }[by]


def test_run_rows(
    conn: sqlite3.Connection, scope: Scope, by: str | None, parts: Parts
) -> list[tuple[Any, bool, int, int, int]] | None:
    """(key, current?, runs, runs with a result, passed) per group and period part; None
    when runs cannot be grouped so (by language)."""
    keys = _run_key(by)
    if keys is None:
        return None
    dim, rollup_key, raw_key = keys
    ws = " AND workspace_id = :ws" if scope.workspace_id is not None else ""
    rollup_sql = f"""SELECT {rollup_key} AS k, sum(runs), sum(with_result), sum(passed)
        FROM report_tests WHERE dim = :dim AND span = :span AND bucket >= :lo AND bucket < :hi{ws}
        GROUP BY k"""
    raw_ws = " AND coalesce(t.workspace_id, 0) = :ws" if scope.workspace_id is not None else ""
    if by is None:
        # Each run once, whatever number of episodes it followed.
        raw_sql = f"""SELECT '' AS k, count(*), count(r), coalesce(sum(r), 0) FROM (
            SELECT {_RUN_PASSED} AS r FROM test_runs t
            WHERE t.started_at >= :lo AND t.started_at < :hi{raw_ws}
            AND EXISTS (SELECT 1 FROM episode_test_runs l WHERE l.test_run_id = t.id))"""
    else:
        # DISTINCT: a run that followed two episodes of one group counts once in it.
        raw_sql = f"""SELECT k, count(*), count(r), coalesce(sum(r), 0) FROM (
            SELECT DISTINCT {raw_key} AS k, t.id, {_RUN_PASSED} AS r
            FROM test_runs t JOIN episode_test_runs l ON l.test_run_id = t.id
            JOIN episodes e ON e.id = l.episode_id
            WHERE t.started_at >= :lo AND t.started_at < :hi{raw_ws}
        ) GROUP BY k"""
    rows: list[tuple[Any, bool, int, int, int]] = []
    base: dict[str, Any] = {"dim": dim, "ws": scope.workspace_id, "offset": scope.utc_offset}
    for current, buckets, raw in parts:
        queries = [(raw_sql, 0, lo, hi) for lo, hi in raw]
        queries += [(rollup_sql, span, lo, hi) for span, lo, hi in buckets]
        for sql, span, lo, hi in queries:
            for r in conn.execute(sql, {**base, "span": span, "lo": lo, "hi": hi}):
                if r[1]:
                    rows.append((r[0], current, int(r[1]), int(r[2]), int(r[3])))
    return rows


#: What report_episodes holds, computed from the links of the episodes started in [:lo, :hi).
EPISODES_RAW_SQL = f"""WITH linked AS (
    SELECT e.id AS eid, e.started_at, coalesce(e.workspace_id, 0) AS workspace_id,
           e.agent, coalesce(e.model, '') AS model, t.command, t.started_at AS at,
           {_RUN_PASSED} AS r
    FROM episodes e JOIN episode_test_runs l ON l.episode_id = e.id
    JOIN test_runs t ON t.id = l.test_run_id
    WHERE e.started_at >= :lo AND e.started_at < :hi
), per_command AS (
    SELECT eid, started_at, workspace_id, agent, model,
           min(CASE WHEN r = 0 THEN at END) AS first_fail,
           max(CASE WHEN r = 1 THEN at END) AS last_pass, min(at) AS first_run
    FROM linked GROUP BY eid, command
)
SELECT eid, started_at, workspace_id, agent, model, min(first_run) AS first_run_at,
       (SELECT min(p.applied_at) FROM proposals p WHERE p.episode_id = eid
        AND p.applied_at IS NOT NULL) AS first_edit_at,
       max(first_fail IS NOT NULL) AS failing,
       max(coalesce(last_pass > first_fail, 0)) AS repaired
FROM per_command GROUP BY eid"""


def episode_test_rows(
    conn: sqlite3.Connection, scope: Scope, by: str | None, *, rollups: bool = True
) -> list[tuple[Any, bool, float | None, int, int, int]] | None:
    """(key, current?, seconds from first edit to first run, episodes, failing, repaired) per
    group; None when episodes cannot be grouped so (by language). `rollups=False`: from the
    links rather than `report_episodes`."""
    key = {
        None: "''",
        "agent": "agent",
        "model": "model",
        "language": None,
        "workspace": "workspace_id",
        "day": _day("started_at"),
        "week": _week("started_at"),
    }[by]
    if key is None:
        return None
    params = {
        "since": scope.since,
        "lo": scope.previous_since,
        "hi": scope.until,
        "ws": scope.workspace_id,
        "offset": scope.utc_offset,
    }
    ws = " AND workspace_id = :ws" if scope.workspace_id is not None else ""
    # With the rollups off (the tests), the same rows come from the links.
    source = "report_episodes" if rollups else f"({EPISODES_RAW_SQL})"
    # One row per (group, period, first-test time to the second): a histogram, few rows.
    rows = conn.execute(
        f"""SELECT k, cur, d, count(*), sum(failing), sum(failing AND repaired) FROM (
            SELECT {key} AS k, started_at >= :since AS cur, failing, repaired,
            CASE WHEN first_run_at - first_edit_at >= 0
                 THEN round(first_run_at - first_edit_at) END AS d
            FROM {source} WHERE started_at >= :lo AND started_at < :hi{ws})
        GROUP BY k, cur, d""",
        params,
    )
    return [(r[0], bool(r[1]), r[2], int(r[3]), int(r[4]), int(r[5])) for r in rows]


def undone_file_rows(
    conn: sqlite3.Connection, scope: Scope, by: str | None, top: int
) -> list[tuple[Any, str, str, int, int]]:
    """(key, workspace root, path, undone, settled) of each group's `top` most-undone files."""
    # A language is a function of the path: it is worked out once per file, after grouping.
    per_file = by in (None, "language", "workspace")
    row_key = "NULL" if per_file else _proposal_key(by)
    file_key = {None: "''", "language": ext_sql("f.path"), "workspace": "coalesce(f.wsid, 0)"}
    key = file_key[by] if per_file else "f.k0"
    same_group = "" if per_file else f" AND {_proposal_key(by)} = r.k"
    if by in ("day", "week"):
        # The group is a stretch of time: let the index find it.
        first, days = ("r.k", 1) if by == "day" else ("(r.k * 7 - 3)", 7)
        same_group += (
            f" AND p.created_at >= {first} * 86400 - :offset"
            f" AND p.created_at < ({first} + {days}) * 86400 - :offset"
        )
    ws = " AND p.workspace_id IS :ws" if scope.workspace_id is not None else ""
    params = {
        "lo": scope.since,
        "hi": scope.until,
        "ws": scope.workspace_id,
        "offset": scope.utc_offset,
        "top": top,
    }
    # `outcome = 'undone'` literally: it selects the partial index proposals_report_undone.
    # The settled count of each ranked file reads the covering index proposals_report_file.
    ranked = conn.execute(
        f"""WITH files AS (
            SELECT {row_key} AS k0, p.workspace_id AS wsid, p.path, count(*) AS undone
            FROM proposals p
            WHERE p.outcome = 'undone' AND p.created_at >= :lo AND p.created_at < :hi{ws}
            GROUP BY k0, p.workspace_id, p.path
        ), ranked AS (
            SELECT k, wsid, root, path, undone FROM (
                SELECT {key} AS k, f.wsid, coalesce(w.root, '') AS root, f.path, f.undone,
                       row_number() OVER (PARTITION BY {key}
                       ORDER BY f.undone DESC, coalesce(w.root, ''), f.path) AS rank
                FROM files f LEFT JOIN workspaces w ON w.id = f.wsid
            ) WHERE rank <= :top
        )
        SELECT r.k, r.root, r.path, r.undone, (SELECT count(*) FROM proposals p
            WHERE p.workspace_id IS r.wsid AND p.path = r.path AND p.created_at >= :lo
            AND p.created_at < :hi AND p.outcome IN {_SETTLED}{same_group})
        FROM ranked r""",
        params,
    ).fetchall()
    return [(r[0], r[1], r[2], int(r[3]), int(r[4])) for r in ranked]


def lost_reason_rows(conn: sqlite3.Connection, scope: Scope) -> list[tuple[str, int]]:
    """(reason, proposals) of the period's lost proposals, most first."""
    ws = " AND workspace_id IS :ws" if scope.workspace_id is not None else ""
    rows = conn.execute(
        f"""SELECT coalesce(reason, ''), count(*) FROM proposals
            WHERE outcome = 'lost' AND created_at >= :lo AND created_at < :hi{ws}
            GROUP BY 1 ORDER BY 2 DESC, 1""",
        {"lo": scope.since, "hi": scope.until, "ws": scope.workspace_id},
    ).fetchall()
    return [(r[0] or "unknown", int(r[1])) for r in rows]


def workspace_roots(conn: sqlite3.Connection) -> dict[int, str]:
    return {int(r[0]): str(r[1]) for r in conn.execute("SELECT id, root FROM workspaces")}


def workspace_id_of(conn: sqlite3.Connection, root: str) -> int | None:
    row = conn.execute("SELECT id FROM workspaces WHERE root = ?", (root,)).fetchone()
    return None if row is None else int(row[0])


def today_counts(conn: sqlite3.Connection, since: float) -> tuple[dict[str, int], tuple[int, ...]]:
    """Proposals created since `since` by outcome, and the runs started since: (all, exit code
    0, another exit code)."""
    outcomes = {
        str(outcome): int(count)
        for outcome, count in conn.execute(
            "SELECT outcome, count(*) FROM proposals WHERE created_at >= ? GROUP BY outcome",
            (since,),
        )
    }
    runs = conn.execute(
        """SELECT count(*), coalesce(sum(exit_code = 0), 0),
           coalesce(sum(exit_code IS NOT NULL AND exit_code != 0), 0)
           FROM test_runs WHERE started_at >= ?""",
        (since,),
    ).fetchone()
    return outcomes, (int(runs[0]), int(runs[1]), int(runs[2]))
