"""What every group of `Store`'s rows builds on: the connection, its write transaction, and the
workspaces and episodes that every proposal and test run hangs from.

`Store` is put together from one mixin per kind of row (`proposal_rows`, `checkpoint_rows`,
`run_rows`) so that no module holds every write; each derives from `RowGroup`, so it is checked
on its own. The one method a group calls in another is declared here for mypy only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from capture.connection import sqlite3
from capture.store.ids import new_id

__all__ = ["RowGroup"]


class RowGroup:
    """The base of `Store`'s mixins: the connection and what every kind of row needs."""

    conn: sqlite3.Connection
    path: Path

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        if self.conn.in_transaction:
            yield self.conn
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    def ensure_workspace(self, root: str, now: float) -> int:
        row = self.conn.execute("SELECT id FROM workspaces WHERE root = ?", (root,)).fetchone()
        if row:
            return int(row[0])
        self.conn.execute(
            "INSERT OR IGNORE INTO workspaces (root, created_at) VALUES (?, ?)", (root, now)
        )
        return int(
            self.conn.execute("SELECT id FROM workspaces WHERE root = ?", (root,)).fetchone()[0]
        )

    def ensure_episode(
        self,
        *,
        workspace_id: int,
        agent: str,
        now: float,
        gap: float,
        session_id: str | None = None,
        turn_id: str | None = None,
        model: str | None = None,
        prompt: str | None = None,
        source: str | None = None,
    ) -> str:
        """The episode for an agent turn: keyed by the agent's own ids when it has them, else the
        agent's latest open episode in this workspace if it was active within `gap` seconds."""
        key = f"{agent}\x1f{session_id}\x1f{turn_id}" if turn_id else None
        row = None
        if key:
            row = self.conn.execute("SELECT id FROM episodes WHERE key = ?", (key,)).fetchone()
        else:
            row = self.conn.execute(
                """SELECT id FROM episodes WHERE workspace_id = ? AND agent = ?
                   AND session_id IS ? AND ended_at IS NULL AND last_at >= ?
                   ORDER BY last_at DESC LIMIT 1""",
                (workspace_id, agent, session_id, now - gap),
            ).fetchone()
        if row:
            episode_id = str(row[0])
            self.conn.execute(
                """UPDATE episodes SET last_at = max(last_at, ?), model = coalesce(?, model),
                   prompt = coalesce(prompt, ?) WHERE id = ?""",
                (now, model, prompt, episode_id),
            )
            return episode_id
        episode_id = new_id(now)
        self.conn.execute(
            """INSERT INTO episodes (id, workspace_id, agent, model, session_id, turn_id, key,
               prompt, source, started_at, last_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                episode_id,
                workspace_id,
                agent,
                model,
                session_id,
                turn_id,
                key,
                prompt,
                source,
                now,
                now,
            ),
        )
        return episode_id

    def end_episode(self, episode_id: str, now: float) -> None:
        self.conn.execute(
            "UPDATE episodes SET ended_at = coalesce(ended_at, ?) WHERE id = ?", (now, episode_id)
        )

    if TYPE_CHECKING:
        # Provided by `CheckpointRows` (capture.store.checkpoint_rows).

        def _settle_episode_if_done(self, episode_id: str, now: float) -> None: ...
