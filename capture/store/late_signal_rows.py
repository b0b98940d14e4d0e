"""The late signals of each proposal (`late_signals`, one row per proposal, the newest pass's),
and the proposals a late pass still watches."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from capture.connection import sqlite3
from capture.tiers.late_signals import LateSignals

__all__ = ["late_signals", "watched_proposals", "write_late_signals"]

# (column, LateSignals field) in table order
_COLUMNS = (
    ("measured_at", "measured_at"),
    ("lines", "lines"),
    ("committed", "committed"),
    ("commit_sha", "commit"),
    ("committed_at", "committed_at"),
    ("path_at_commit", "path_at_commit"),
    ("churn_14d", "churn_14d"),
    ("churn_30d", "churn_30d"),
    ("days_observed", "days_observed"),
    ("reverted_by", "reverted_by"),
    ("reverted_at", "reverted_at"),
    ("revert_kind", "revert_kind"),
    ("fixed_by", "fixed_by"),
    ("fixed_at", "fixed_at"),
    ("syntax_errors_added", "syntax_errors_added"),
    ("markers_added", "markers_added"),
    ("file_gone", "file_gone"),
    ("renamed", "renamed"),
)
_NAMES = ", ".join(c for c, _ in _COLUMNS)


def write_late_signals(conn: sqlite3.Connection, rows: Iterable[tuple[str, LateSignals]]) -> None:
    """Keep each proposal's newest late signals (inside the caller's transaction)."""
    marks = ", ".join("?" * (len(_COLUMNS) + 1))
    conn.executemany(
        f"INSERT OR REPLACE INTO late_signals (proposal_id, {_NAMES}) VALUES ({marks})",
        [(pid, *(int(v) if isinstance(v, bool) else v for v in _values(s))) for pid, s in rows],
    )


def _values(s: LateSignals) -> list[object]:
    return [getattr(s, field) for _, field in _COLUMNS]


def late_signals(
    conn: sqlite3.Connection, proposal_ids: Sequence[str] | None = None
) -> dict[str, LateSignals]:
    """The stored late signals of these proposals (of every proposal that has them)."""
    sql = f"SELECT proposal_id, {_NAMES} FROM late_signals"
    out: dict[str, LateSignals] = {}
    chunks: list[Sequence[str] | None] = [None]
    if proposal_ids is not None:
        ids = list(proposal_ids)
        chunks = [ids[i : i + 500] for i in range(0, len(ids), 500)]
    for chunk in chunks:
        params: Sequence[str] = ()
        query = sql
        if chunk is not None:
            query += f" WHERE proposal_id IN ({','.join('?' * len(chunk))})"
            params = chunk
        for row in conn.execute(query, params):
            values = dict(zip((f for _, f in _COLUMNS), tuple(row)[1:], strict=True))
            values["file_gone"] = bool(values["file_gone"])
            values["renamed"] = bool(values["renamed"])
            out[row[0]] = LateSignals(**values)
    return out


def watched_proposals(
    conn: sqlite3.Connection, *, applied_since: float, watch_seconds: float, under: str | None
) -> list[tuple[str, str, str, float, tuple[tuple[str, str], ...]]]:
    """(id, workspace root, path, applied at, its hunks' (old, new) texts) of each applied
    proposal kept or edited that a late pass still watches, oldest first: never measured or
    not committed and applied since `applied_since`, or committed less than `watch_seconds`
    before its last measure. `under`: only the workspaces in that folder."""
    sql = """SELECT p.id, w.root, p.path, p.applied_at FROM proposals p
        JOIN workspaces w ON w.id = p.workspace_id
        LEFT JOIN late_signals l ON l.proposal_id = p.id
        WHERE p.state = 'applied' AND p.outcome IN ('kept', 'edited')
          AND (l.proposal_id IS NULL OR l.committed_at IS NULL AND p.applied_at >= ?
               OR l.committed_at IS NOT NULL AND l.measured_at < l.committed_at + ?)"""
    params: list[object] = [applied_since, watch_seconds]
    if under is not None:
        sql += " AND (w.root = ? OR substr(w.root, 1, ?) = ?)"
        params += [under, len(under) + 1, under.rstrip("/") + "/"]
    rows = conn.execute(sql + " ORDER BY p.applied_at", params).fetchall()
    hunks: dict[str, list[tuple[str, str]]] = defaultdict(list)
    ids = [r[0] for r in rows]
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        for pid, old, new in conn.execute(
            f"SELECT proposal_id, old_text, new_text FROM hunks WHERE proposal_id IN "
            f"({','.join('?' * len(chunk))}) ORDER BY proposal_id, idx",
            chunk,
        ):
            hunks[pid].append((old, new))
    return [(r[0], r[1], r[2], float(r[3]), tuple(hunks[r[0]])) for r in rows]
