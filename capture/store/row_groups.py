"""What every group of `Store`'s rows builds on: the connection, its write transaction, and the
workspaces and episodes that every proposal and test run hangs from.

`Store` is put together from one mixin per kind of row (`proposal_rows`, `checkpoint_rows`,
`run_rows`) so that no module holds every write; each derives from `RowGroup`, so it is checked
on its own. The one method a group calls in another is declared here for mypy only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from capture.connection import sqlite3
from capture.store.ids import new_id

__all__ = ["RowGroup", "episode_key"]


def episode_key(agent: str, session_id: str | None, turn_id: str) -> str:
    """The `episodes.key` of a turn the agent named."""
    return f"{agent}\x1f{session_id}\x1f{turn_id}"


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

    # The steps of a transaction, for a caller that must tell a failed statement from a failed
    # rollback (the hooks' queue, the server's writer): `transaction` is the usual way.

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def begin(self) -> None:
        """Open a write transaction, taking the write lock now (a busy writer is waited for)."""
        self.conn.execute("BEGIN IMMEDIATE")

    def begin_read(self) -> None:
        """Open a read transaction: what it reads is one snapshot of the database."""
        self.conn.execute("BEGIN")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        self.conn.execute("ROLLBACK")

    def open_savepoint(self, name: str) -> None:
        self.conn.execute(f"SAVEPOINT {name}")

    def rollback_to(self, name: str) -> None:
        """Undo what was written since the savepoint, and end it."""
        self.conn.execute(f"ROLLBACK TO {name}")
        self.conn.execute(f"RELEASE {name}")

    def release(self, name: str) -> None:
        self.conn.execute(f"RELEASE {name}")

    @contextmanager
    def savepoint(self, name: str) -> Iterator[None]:
        """Inside the open transaction: what the block wrote is undone alone if it raises."""
        self.open_savepoint(name)
        try:
            yield
        except BaseException:
            self.rollback_to(name)
            raise
        self.release(name)

    def workspace_id(self, root: str) -> int | None:
        """The workspace's id, if it is on record (none is created)."""
        row = self.conn.execute("SELECT id FROM workspaces WHERE root = ?", (root,)).fetchone()
        return None if row is None else int(row[0])

    def workspace_root(self, workspace_id: int) -> str:
        row = self.conn.execute("SELECT root FROM workspaces WHERE id = ?", (workspace_id,))
        return str(row.fetchone()[0])

    def _known_keys(self, table: str, keys: Sequence[str]) -> set[str]:
        """The keys among `keys` a row of `table` has as its dedupe_key."""
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self.conn.execute(
                    f"SELECT dedupe_key FROM {table} WHERE dedupe_key IN ({marks})", chunk
                )
            )
        return found

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
        key = episode_key(agent, session_id, turn_id) if turn_id else None
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
