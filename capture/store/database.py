"""The local SQLite store: the rendezvous point of editor windows, hook commands and watchers.

Stdlib sqlite3 only (the hook path cannot afford heavier imports), connected through
`capture.connection` like every process that writes the database; the schema is kept by
`capture.store.schema`. Every write is a short `BEGIN IMMEDIATE` transaction: taking the write lock
up front means a busy writer waits (busy timeout) instead of failing on a lock upgrade.

`Store` opens the connection (migrating the schema when it is behind, and the tables of a
package that opens it with its own migration set: `capture.store.migration_sets`) and holds the
event log, the deferred rollups and the connection's settings; the rows of proposals,
checkpoints, test runs and episodes are written by the mixins it inherits
(`capture.store.proposal_rows`, `checkpoint_rows`, `run_rows`, `episode_rows`), on the
transaction, workspaces and episodes they share (`capture.store.row_groups`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capture.connection import connect, sqlite3
from capture.errors import NotFoundError, StoreError
from capture.store.checkpoint_rows import CheckpointRows
from capture.store.episode_rows import EpisodeRows
from capture.store.migration_sets import MigrationSet, apply_migration_set
from capture.store.proposal_rows import ProposalRows
from capture.store.run_rows import RunRows
from capture.store.schema import SCHEMA_VERSION, migrate, schema_version
from capture.store.trajectory_rows import TrajectoryRows

__all__ = ["BUSY_TIMEOUT_MS", "DeferredRollups", "Store"]

BUSY_TIMEOUT_MS = 30_000


@dataclass(frozen=True, slots=True)
class DeferredRollups:
    """Rollup triggers dropped for a bulk insert: their SQL, and the last proposal rowid and
    checkpoint id before it."""

    triggers: tuple[str, ...]
    proposals: int
    checkpoints: int


def _connect(path: Path) -> sqlite3.Connection:
    conn = connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class Store(ProposalRows, CheckpointRows, RunRows, EpisodeRows, TrajectoryRows):
    """One connection to the capture database. Not shared between threads."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        cache_kib: int | None = None,
        migration_sets: Sequence[MigrationSet] = (),
    ) -> Store:
        """The store at ``path``, migrated if behind. ``cache_kib`` bounds this connection's
        page cache (the library's default is 2 MB) for a connection that lives all day.
        ``migration_sets``: the tables of the packages opening it (their migrations applied
        after the core's)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = _connect(path)
            if cache_kib is not None:
                conn.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
            wal = conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
            if not wal or schema_version(conn) < SCHEMA_VERSION:
                # Switching to WAL needs the database to itself, and several processes (or a
                # server's threads) may open a new store at once: both happen under the
                # migration lock, where a second opener waits its turn.
                migrate(path)
            elif schema_version(conn) > SCHEMA_VERSION:
                raise StoreError(
                    f"{path} was written by a newer agent-capture (schema "
                    f"{schema_version(conn)} > {SCHEMA_VERSION}); upgrade agent-capture"
                )
            for migrations in migration_sets:
                apply_migration_set(conn, migrations)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot open {path}: {exc.strerror or exc}") from exc
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the connection's settings ------------------------------------------------------------

    def busy_timeout(self) -> int:
        """How long, in milliseconds, a statement waits for another writer."""
        return int(self.conn.execute("PRAGMA busy_timeout").fetchone()[0])

    def set_busy_timeout(self, ms: int) -> None:
        self.conn.execute(f"PRAGMA busy_timeout={int(ms)}")

    def cache_size(self) -> int:
        """The page cache's size as SQLite states it (negative: KiB; positive: pages)."""
        return int(self.conn.execute("PRAGMA cache_size").fetchone()[0])

    def set_cache_size(self, size: int) -> None:
        self.conn.execute(f"PRAGMA cache_size = {int(size)}")

    def data_version(self) -> int:
        """A number that changes when another connection commits (no table is read)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def defer_rollups(self) -> DeferredRollups:
        """Stop adding each inserted proposal and checkpoint to the report rollups, inside the
        open write transaction, until `catch_up_rollups` adds them all at once (before the
        commit: no other connection ever sees the triggers missing). For bulk inserts, where a
        trigger per row costs more than the row. Rows inserted meanwhile must not be updated or
        deleted before the catch-up: their update triggers would take out what is not in yet."""
        from capture.store.proposal_rollups import INSERT_TRIGGERS

        assert self.conn.in_transaction, "defer_rollups needs an open write transaction"
        marks = ",".join("?" * len(INSERT_TRIGGERS))
        saved = tuple(
            row[0]
            for row in self.conn.execute(
                f"SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})",
                INSERT_TRIGGERS,
            )
        )
        for name in INSERT_TRIGGERS:
            self.conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        proposals = self.conn.execute("SELECT coalesce(max(rowid), 0) FROM proposals")
        checkpoints = self.conn.execute("SELECT coalesce(max(id), 0) FROM checkpoints")
        return DeferredRollups(saved, proposals.fetchone()[0], checkpoints.fetchone()[0])

    def catch_up_rollups(self, deferred: DeferredRollups) -> None:
        """Add the rows inserted since `defer_rollups` to the rollups; restore the triggers."""
        from capture.store.proposal_rollups import INSERT_TRIGGERS, catch_up_statements

        if len(deferred.triggers) == len(INSERT_TRIGGERS):
            marks = {"proposals": deferred.proposals, "checkpoints": deferred.checkpoints}
            for sql in catch_up_statements():
                self.conn.execute(sql, marks)
        for sql in deferred.triggers:
            self.conn.execute(sql)

    # -- raw log ---------------------------------------------------------------------------

    def append_event(
        self,
        kind: str,
        payload: Any,
        *,
        at: float,
        source: str | None = None,
        workspace: str | None = None,
    ) -> int:
        """Append one input as it was received. Strings are kept verbatim."""
        text = payload if isinstance(payload, str) or payload is None else json.dumps(payload)
        cur = self.conn.execute(
            "INSERT INTO events (at, kind, source, workspace, payload) VALUES (?, ?, ?, ?, ?)",
            (at, kind, source, workspace, text),
        )
        return int(cur.lastrowid or 0)

    def append_events(self, rows: Sequence[tuple[float, str, str | None, str | None, str]]) -> None:
        """Batched append: (at, kind, source, workspace, payload) rows in one transaction."""
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO events (at, kind, source, workspace, payload) VALUES (?, ?, ?, ?, ?)",
                rows,
            )

    def prune_events(self, before: float) -> int:
        with self.transaction():
            return self.conn.execute("DELETE FROM events WHERE at < ?", (before,)).rowcount

    # -- reading ---------------------------------------------------------------------------

    def episode_ids(self) -> list[str]:
        return [str(r[0]) for r in self.conn.execute("SELECT id FROM episodes ORDER BY id")]

    def resolve_episode_id(self, prefix: str) -> str:
        rows = self.conn.execute(
            "SELECT id FROM episodes WHERE id LIKE ? ORDER BY id LIMIT 2",
            (prefix.replace("%", "").replace("_", "") + "%",),
        ).fetchall()
        if not rows:
            row = self.conn.execute(
                "SELECT episode_id FROM proposals WHERE id = ?", (prefix,)
            ).fetchone()
            if row:
                return str(row[0])
            raise NotFoundError(f"no episode or proposal with id {prefix!r}")
        if len(rows) > 1:
            raise NotFoundError(f"id prefix {prefix!r} is ambiguous; give more digits")
        return str(rows[0][0])
