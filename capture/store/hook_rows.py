"""What hook calls leave for later hook calls: edits announced before they ran (pending, with
the file as it was then), when a shell test command began and which run its report became, and
what a session start said. Functions over the store's connection; callers hold the transaction.
The episodes a turn opens and closes are `Store`'s (`capture.store.episode_rows`).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from capture.connection import sqlite3
from capture.model import HunkInput, ProposalInput, State

__all__ = [
    "add_pending",
    "drop_pending",
    "pending_pre_image",
    "pending_proposal",
    "remember_session",
    "remember_shell_run",
    "remember_shell_start",
    "session_model",
    "session_pending",
    "shell_run",
    "take_pending",
    "take_pending_since",
    "take_shell_start",
]


#: A pre-image larger than this is not kept with a pending edit (the file's snapshot at the
#: post-tool-use call places the edit instead).
MAX_PRE_IMAGE_CHARS = 2 * 1024 * 1024


def add_pending(
    conn: sqlite3.Connection,
    key: str,
    proposal: ProposalInput,
    workspace_id: int,
    path: str,
    now: float,
    *,
    pre_image: str | None = None,
) -> None:
    """Announce an edit; `pre_image`: the file as the pre-tool-use hook saw it, from which the
    post-tool-use call can rebuild the text the edit produced."""
    data = asdict(proposal)
    data.pop("file_text", None)
    if pre_image is not None and len(pre_image) <= MAX_PRE_IMAGE_CHARS:
        data["pre_image"] = pre_image
    conn.execute(
        """INSERT OR IGNORE INTO hook_pending (key, agent, session_id, turn_id, workspace_id, path,
           proposal, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            key,
            proposal.agent,
            proposal.session_id,
            proposal.turn_id,
            workspace_id,
            path,
            json.dumps(data, default=str),
            now,
        ),
    )


def pending_proposal(conn: sqlite3.Connection, key: str) -> ProposalInput | None:
    row = conn.execute("SELECT proposal FROM hook_pending WHERE key = ?", (key,)).fetchone()
    return None if row is None else _proposal(row[0])


def pending_pre_image(conn: sqlite3.Connection, key: str) -> str | None:
    """The file as it was when the pending edit was announced, when that was kept."""
    row = conn.execute("SELECT proposal FROM hook_pending WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    image = json.loads(row[0]).get("pre_image")
    return image if isinstance(image, str) else None


def drop_pending(conn: sqlite3.Connection, key: str) -> None:
    conn.execute("DELETE FROM hook_pending WHERE key = ?", (key,))


def session_pending(
    conn: sqlite3.Connection, agent: str, session_id: str, key_prefix: str
) -> list[tuple[str, ProposalInput]]:
    """The session's pending edits whose key begins with `key_prefix`, oldest first (kept)."""
    rows = conn.execute(
        """SELECT key, proposal FROM hook_pending WHERE agent = ? AND session_id = ?
           AND substr(key, 1, ?) = ? ORDER BY created_at""",
        (agent, session_id, len(key_prefix), key_prefix),
    ).fetchall()
    return [(str(row[0]), _proposal(row[1])) for row in rows]


def take_pending(
    conn: sqlite3.Connection, agent: str, session_id: str | None, workspace_id: int | None
) -> list[tuple[float, ProposalInput]]:
    """Remove and return the session's pending edits with the time each was announced (a
    session-less agent's: those of the workspace)."""
    params: tuple[object, ...]
    if session_id is not None:
        where, params = "agent = ? AND session_id = ?", (agent, session_id)
    else:
        where, params = (
            "agent = ? AND session_id IS NULL AND workspace_id IS ?",
            (
                agent,
                workspace_id,
            ),
        )
    rows = conn.execute(
        f"SELECT created_at, proposal FROM hook_pending WHERE {where} ORDER BY created_at", params
    ).fetchall()
    conn.execute(f"DELETE FROM hook_pending WHERE {where}", params)
    return [(float(row[0]), _proposal(row[1])) for row in rows]


def take_pending_since(
    conn: sqlite3.Connection, agent: str, since: float
) -> list[tuple[float, ProposalInput]]:
    """Remove and return the agent's pending edits announced at or after `since` (what a
    replayed log left waiting), with the time each was announced."""
    where = "agent = ? AND created_at >= ?"
    rows = conn.execute(
        f"SELECT created_at, proposal FROM hook_pending WHERE {where} ORDER BY created_at",
        (agent, since),
    ).fetchall()
    conn.execute(f"DELETE FROM hook_pending WHERE {where}", (agent, since))
    return [(float(row[0]), _proposal(row[1])) for row in rows]


def _proposal(text: str) -> ProposalInput:
    data: dict[str, Any] = json.loads(text)
    data["hunks"] = [HunkInput(**h) for h in data.get("hunks", [])]
    data["state"] = State(data.get("state", "rejected"))
    known = set(ProposalInput.__dataclass_fields__)
    return ProposalInput(**{k: v for k, v in data.items() if k in known})


def remember_session(
    conn: sqlite3.Connection,
    agent: str,
    session_id: str,
    model: str | None,
    source: str | None,
    now: float,
) -> None:
    conn.execute(
        """INSERT INTO hook_sessions (agent, session_id, model, source, started_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, session_id) DO UPDATE SET
           model = coalesce(excluded.model, model), source = excluded.source""",
        (agent, session_id, model, source, now),
    )


def session_model(conn: sqlite3.Connection, agent: str, session_id: str) -> str | None:
    row = conn.execute(
        "SELECT model FROM hook_sessions WHERE agent = ? AND session_id = ?", (agent, session_id)
    ).fetchone()
    return None if row is None else row[0]


#: The `agent` of hook_pending rows that remember which run a shell call's report became: no
#: agent is named so, so `take_pending` never takes them for announced edits.
_SHELL_RUN = "shell-run"
#: A re-sent report of one shell call comes within seconds; a day bounds the rows kept.
_SHELL_RUN_KEEP_S = 86400.0


def remember_shell_run(conn: sqlite3.Connection, key: str, run_id: str, now: float) -> None:
    """Note that the shell call `key` is run `run_id`: a merged run may carry another source's
    key, and a re-sent report of the call must still find it."""
    conn.execute(
        "DELETE FROM hook_pending WHERE agent = ? AND created_at < ?",
        (_SHELL_RUN, now - _SHELL_RUN_KEEP_S),
    )
    conn.execute(
        """INSERT OR IGNORE INTO hook_pending (key, agent, session_id, turn_id, workspace_id, path,
           proposal, created_at) VALUES (?, ?, NULL, NULL, NULL, '', ?, ?)""",
        (f"{_SHELL_RUN}:{key}", _SHELL_RUN, run_id, now),
    )


def shell_run(conn: sqlite3.Connection, key: str) -> str | None:
    """The run a shell call's earlier report became (`remember_shell_run`), if noted."""
    row = conn.execute(
        "SELECT proposal FROM hook_pending WHERE key = ?", (f"{_SHELL_RUN}:{key}",)
    ).fetchone()
    return None if row is None else str(row[0])


#: The `agent` of hook_pending rows holding when an agent's shell began a test command (its
#: pre-tool-use report), for a post-tool-use report that carries no duration. A command that
#: never reports back (denied, killed with the agent) leaves its row for a day.
_SHELL_START = "shell-start"


def remember_shell_start(conn: sqlite3.Connection, key: str, now: float) -> None:
    """Note that the shell call `key` began at `now` (a re-sent report keeps the first time)."""
    conn.execute(
        "DELETE FROM hook_pending WHERE agent = ? AND created_at < ?",
        (_SHELL_START, now - _SHELL_RUN_KEEP_S),
    )
    conn.execute(
        """INSERT OR IGNORE INTO hook_pending (key, agent, session_id, turn_id, workspace_id, path,
           proposal, created_at) VALUES (?, ?, NULL, NULL, NULL, '', '', ?)""",
        (f"{_SHELL_START}:{key}", _SHELL_START, now),
    )


def take_shell_start(conn: sqlite3.Connection, key: str) -> float | None:
    """When the shell call `key` began (`remember_shell_start`), if noted; the note is used up."""
    pending = f"{_SHELL_START}:{key}"
    row = conn.execute("SELECT created_at FROM hook_pending WHERE key = ?", (pending,)).fetchone()
    if row is None:
        return None
    conn.execute("DELETE FROM hook_pending WHERE key = ?", (pending,))
    return float(row[0])
