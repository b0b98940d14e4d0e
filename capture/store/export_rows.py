"""What an export reads besides the episode JSON (`capture.store.episodes`): the episodes it
selects, a page at a time in keyset order, and each hunk's context as the file holds it now.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from capture.connection import sqlite3

__all__ = ["count_selected", "hunk_contexts", "selected_page"]


def _where(since: float | None, workspace: str | None) -> tuple[str, list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    if since is not None:
        where.append("e.last_at >= ?")
        params.append(since)
    if workspace is not None:
        where.append("w.root = ?")
        params.append(workspace)
    return (" AND ".join(where) or "1"), params


def count_selected(conn: sqlite3.Connection, *, since: float | None, workspace: str | None) -> int:
    """Episodes active since `since` (all: None), of the workspace at that root (all: None)."""
    where, params = _where(since, workspace)
    row = conn.execute(
        "SELECT COUNT(*) FROM episodes e LEFT JOIN workspaces w ON w.id = e.workspace_id "
        f"WHERE {where}",
        params,
    ).fetchone()
    return int(row[0])


def selected_page(
    conn: sqlite3.Connection,
    *,
    since: float | None,
    workspace: str | None,
    after: tuple[float, str] | None,
    size: int,
) -> list[tuple[str, float]]:
    """(id, started at) of the next `size` selected episodes after `after` (a page's last
    (started at, id); None: from the first), oldest first."""
    where, params = _where(since, workspace)
    keyset = ""
    if after is not None:
        keyset = " AND (e.started_at > ? OR (e.started_at = ? AND e.id > ?))"
        params += [after[0], after[0], after[1]]
    rows = conn.execute(
        "SELECT e.id, e.started_at FROM episodes e "
        "LEFT JOIN workspaces w ON w.id = e.workspace_id "
        f"WHERE {where}{keyset} ORDER BY e.started_at, e.id LIMIT ?",
        [*params, size],
    ).fetchall()
    return [(str(r[0]), float(r[1])) for r in rows]


def hunk_contexts(
    conn: sqlite3.Connection, proposal_ids: Sequence[str]
) -> Iterator[tuple[str, int, str | None, str | None, str, str | None, int | None]]:
    """(proposal id, hunk index, context before, context after, status, the region's text now,
    its first line) of each hunk of these proposals; the region's text and line only while it
    is tracked. Cut out of the file's text in SQLite, so that text never comes into Python."""
    ids = list(proposal_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        yield from conn.execute(
            f"""SELECT h.proposal_id, h.idx, h.context_before, h.context_after, h.status,
                CASE WHEN h.status != 'lost' AND h.region_start IS NOT NULL
                     THEN substr(t.text, h.region_start + 1, h.region_end - h.region_start) END,
                CASE WHEN h.status != 'lost' AND h.region_start IS NOT NULL
                     THEN length(substr(t.text, 1, h.region_start))
                        - length(replace(substr(t.text, 1, h.region_start), char(10), '')) + 1
                     END
                FROM hunks h JOIN proposals p ON p.id = h.proposal_id
                LEFT JOIN tracked_files t ON t.workspace_id = p.workspace_id AND t.path = p.path
                WHERE h.proposal_id IN ({marks}) ORDER BY h.proposal_id, h.idx""",
            chunk,
        )
