"""The file changes a watcher recorded in the event log (kind `file-change`): what a checkpoint
evaluated late is rebuilt from (`capture.edits.history`)."""

from __future__ import annotations

import json

from capture.connection import sqlite3

__all__ = ["FILE_CHANGE", "change_payload", "changes_by_file"]

#: The event kind of one change of a tracked file, with the file's new text.
FILE_CHANGE = "file-change"


def change_payload(path: str, text: str | None) -> str:
    """The event's payload: the workspace-relative path and the text (None: the file is gone)."""
    return json.dumps({"path": path, "text": text}, ensure_ascii=False)


def changes_by_file(
    conn: sqlite3.Connection, since: float, until: float
) -> dict[tuple[str, str], list[tuple[float, str | None]]]:
    """Every recorded change in [since, until], per (workspace root, path), oldest first: one
    read for all the files a pass evaluates."""
    found: dict[tuple[str, str], list[tuple[float, str | None]]] = {}
    rows = conn.execute(
        """SELECT at, workspace, payload FROM events WHERE kind = ? AND at >= ? AND at <= ?
           ORDER BY at, id""",
        (FILE_CHANGE, since, until),
    )
    for at, root, payload in rows:
        try:
            data = json.loads(payload)
        except (TypeError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("path"), str):
            text = data.get("text")
            found.setdefault((str(root), data["path"]), []).append(
                (float(at), text if isinstance(text, str) else None)
            )
    return found


def pending_files(conn: sqlite3.Connection) -> list[tuple[str, str, float]]:
    """(workspace root, path, next due time) of every file with a checkpoint window not yet
    observed (the late check, a day away, is left to the late pass)."""
    rows = conn.execute(
        """SELECT w.root, p.path, min(c.due_at) FROM checkpoints c
           JOIN proposals p ON p.id = c.proposal_id JOIN workspaces w ON w.id = p.workspace_id
           WHERE c.observed_at IS NULL AND c.window != 'late'
           GROUP BY w.root, p.path ORDER BY w.root, p.path"""
    )
    return [(str(r[0]), str(r[1]), float(r[2])) for r in rows]


def known_roots(conn: sqlite3.Connection, since: float) -> list[str]:
    """The workspaces with a proposal applied since `since`: where the late pass looks."""
    rows = conn.execute(
        """SELECT DISTINCT w.root FROM proposals p JOIN workspaces w ON w.id = p.workspace_id
           WHERE p.created_at >= ? ORDER BY w.root""",
        (since,),
    )
    return [str(r[0]) for r in rows]
