"""What hook calls leave for later hook calls: edits announced before they ran (pending), when a
shell test command began and which run its report became, what a session start said, and which
episodes a turn boundary closes. SQL over the store's connection; callers hold the transaction.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from capture.model import HunkInput, ProposalInput, State
from capture.store.database import Store

__all__ = [
    "add_pending",
    "adopt_turn",
    "current_episode",
    "episode_key",
    "drop_pending",
    "end_open_episodes",
    "pending_pre_image",
    "pending_proposal",
    "remember_session",
    "remember_shell_run",
    "remember_shell_start",
    "session_model",
    "shell_run",
    "take_pending",
    "take_shell_start",
]


#: A pre-image larger than this is not kept with a pending edit (the file's snapshot at the
#: post-tool-use call places the edit instead).
MAX_PRE_IMAGE_CHARS = 2 * 1024 * 1024


def add_pending(
    store: Store,
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
    store.conn.execute(
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


def pending_proposal(store: Store, key: str) -> ProposalInput | None:
    row = store.conn.execute("SELECT proposal FROM hook_pending WHERE key = ?", (key,)).fetchone()
    return None if row is None else _proposal(row[0])


def pending_pre_image(store: Store, key: str) -> str | None:
    """The file as it was when the pending edit was announced, when that was kept."""
    row = store.conn.execute("SELECT proposal FROM hook_pending WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    image = json.loads(row[0]).get("pre_image")
    return image if isinstance(image, str) else None


def drop_pending(store: Store, key: str) -> None:
    store.conn.execute("DELETE FROM hook_pending WHERE key = ?", (key,))


def take_pending(
    store: Store, agent: str, session_id: str | None, workspace_id: int | None
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
    rows = store.conn.execute(
        f"SELECT created_at, proposal FROM hook_pending WHERE {where} ORDER BY created_at", params
    ).fetchall()
    store.conn.execute(f"DELETE FROM hook_pending WHERE {where}", params)
    return [(float(row[0]), _proposal(row[1])) for row in rows]


def _proposal(text: str) -> ProposalInput:
    data: dict[str, Any] = json.loads(text)
    data["hunks"] = [HunkInput(**h) for h in data.get("hunks", [])]
    data["state"] = State(data.get("state", "rejected"))
    known = set(ProposalInput.__dataclass_fields__)
    return ProposalInput(**{k: v for k, v in data.items() if k in known})


def end_open_episodes(
    store: Store, *, workspace_id: int, agent: str, session_id: str | None, now: float
) -> None:
    """Close the agent's open episodes of this session in this workspace: a new prompt (or the
    end of a turn) without a turn id of its own starts the next one."""
    store.conn.execute(
        """UPDATE episodes SET ended_at = ? WHERE workspace_id = ? AND agent = ?
           AND session_id IS ? AND ended_at IS NULL""",
        (now, workspace_id, agent, session_id),
    )


def remember_session(
    store: Store, agent: str, session_id: str, model: str | None, source: str | None, now: float
) -> None:
    store.conn.execute(
        """INSERT INTO hook_sessions (agent, session_id, model, source, started_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT (agent, session_id) DO UPDATE SET
           model = coalesce(excluded.model, model), source = excluded.source""",
        (agent, session_id, model, source, now),
    )


def session_model(store: Store, agent: str, session_id: str) -> str | None:
    row = store.conn.execute(
        "SELECT model FROM hook_sessions WHERE agent = ? AND session_id = ?", (agent, session_id)
    ).fetchone()
    return None if row is None else row[0]


def episode_key(agent: str, session_id: str | None, turn_id: str) -> str:
    """The episodes.key Store.ensure_episode gives a turn the agent named."""
    return f"{agent}\x1f{session_id}\x1f{turn_id}"


def adopt_turn(
    store: Store, *, workspace_id: int, agent: str, session_id: str | None, turn_id: str, now: float
) -> None:
    """Give a turn id to the episode its prompt opened before the id was known (a prompt hook
    without it, then tool hooks with it), so the turn stays one episode."""
    key = episode_key(agent, session_id, turn_id)
    if store.conn.execute("SELECT 1 FROM episodes WHERE key = ?", (key,)).fetchone():
        return
    store.conn.execute(
        """UPDATE episodes SET turn_id = ?, key = ?, last_at = max(last_at, ?) WHERE id = (
           SELECT e.id FROM episodes e WHERE e.workspace_id = ? AND e.agent = ?
           AND e.session_id IS ? AND e.turn_id IS NULL AND e.ended_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM proposals p WHERE p.episode_id = e.id)
           ORDER BY e.last_at DESC LIMIT 1)""",
        (turn_id, key, now, workspace_id, agent, session_id),
    )


def current_episode(
    store: Store,
    *,
    workspace_id: int,
    agent: str,
    session_id: str | None,
    turn_id: str | None,
    since: float,
) -> str | None:
    """The episode of the agent's current turn, if one is on record (none is created)."""
    if turn_id:
        row = store.conn.execute(
            "SELECT id FROM episodes WHERE key = ?", (episode_key(agent, session_id, turn_id),)
        ).fetchone()
    else:
        row = store.conn.execute(
            """SELECT id FROM episodes WHERE workspace_id = ? AND agent = ? AND session_id IS ?
               AND ended_at IS NULL AND last_at >= ? ORDER BY last_at DESC LIMIT 1""",
            (workspace_id, agent, session_id, since),
        ).fetchone()
    return None if row is None else str(row[0])


#: The `agent` of hook_pending rows that remember which run a shell call's report became: no
#: agent is named so, so `take_pending` never takes them for announced edits.
_SHELL_RUN = "shell-run"
#: A re-sent report of one shell call comes within seconds; a day bounds the rows kept.
_SHELL_RUN_KEEP_S = 86400.0


def remember_shell_run(store: Store, key: str, run_id: str, now: float) -> None:
    """Note that the shell call `key` is run `run_id`: a merged run may carry another source's
    key, and a re-sent report of the call must still find it."""
    store.conn.execute(
        "DELETE FROM hook_pending WHERE agent = ? AND created_at < ?",
        (_SHELL_RUN, now - _SHELL_RUN_KEEP_S),
    )
    store.conn.execute(
        """INSERT OR IGNORE INTO hook_pending (key, agent, session_id, turn_id, workspace_id, path,
           proposal, created_at) VALUES (?, ?, NULL, NULL, NULL, '', ?, ?)""",
        (f"{_SHELL_RUN}:{key}", _SHELL_RUN, run_id, now),
    )


def shell_run(store: Store, key: str) -> str | None:
    """The run a shell call's earlier report became (`remember_shell_run`), if noted."""
    row = store.conn.execute(
        "SELECT proposal FROM hook_pending WHERE key = ?", (f"{_SHELL_RUN}:{key}",)
    ).fetchone()
    return None if row is None else str(row[0])


#: The `agent` of hook_pending rows holding when an agent's shell began a test command (its
#: pre-tool-use report), for a post-tool-use report that carries no duration. A command that
#: never reports back (denied, killed with the agent) leaves its row for a day.
_SHELL_START = "shell-start"


def remember_shell_start(store: Store, key: str, now: float) -> None:
    """Note that the shell call `key` began at `now` (a re-sent report keeps the first time)."""
    store.conn.execute(
        "DELETE FROM hook_pending WHERE agent = ? AND created_at < ?",
        (_SHELL_START, now - _SHELL_RUN_KEEP_S),
    )
    store.conn.execute(
        """INSERT OR IGNORE INTO hook_pending (key, agent, session_id, turn_id, workspace_id, path,
           proposal, created_at) VALUES (?, ?, NULL, NULL, NULL, '', '', ?)""",
        (f"{_SHELL_START}:{key}", _SHELL_START, now),
    )


def take_shell_start(store: Store, key: str) -> float | None:
    """When the shell call `key` began (`remember_shell_start`), if noted; the note is used up."""
    pending = f"{_SHELL_START}:{key}"
    row = store.conn.execute(
        "SELECT created_at FROM hook_pending WHERE key = ?", (pending,)
    ).fetchone()
    if row is None:
        return None
    store.conn.execute("DELETE FROM hook_pending WHERE key = ?", (pending,))
    return float(row[0])
