"""Sync's tables in the local store, and the migrations that create them.

Registered with the store as the migration set `sync` (see `capture.store.migration_sets`): the
core never creates them. `m005_sync` and `m013_sync_opt_out` were released in the core's set
and keep their names, so a database that applied them there has them applied here.

Who opens the store for sync (`open_store`) gets them applied then; every function of
`sync.store` also makes sure of them on the connection it is given (`sync_tables`), since the
store it works on may have been opened by any process (a hook, the server, the CLI) first.
"""

from __future__ import annotations

from pathlib import Path

from capture.connection import sqlite3
from capture.store.database import Store
from capture.store.migration_sets import MigrationSet, Statements, apply_migration_set

__all__ = ["SYNC_MIGRATIONS", "open_store", "sync_tables"]

# Each entry: (name, statements). Append only: never edit a released migration.
_MIGRATIONS: list[tuple[str, Statements]] = [
    (
        # Opt-in upload (sync/): settings, per-workspace opt-in, the durable outbox, and what was
        # last projected for each episode (to send a new revision only when it changed).
        "m005_sync",
        [
            """CREATE TABLE sync_settings (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                enabled INTEGER NOT NULL DEFAULT 0,
                url TEXT,
                token TEXT,
                salt BLOB,
                last_run_at REAL,
                last_success_at REAL,
                last_error TEXT,
                updated_at REAL
            )""",
            "INSERT INTO sync_settings (id) VALUES (1)",
            # root '*' holds the settings of `--all` (every workspace not listed on its own).
            """CREATE TABLE sync_workspaces (
                root TEXT PRIMARY KEY,
                level TEXT NOT NULL,
                include TEXT NOT NULL DEFAULT '[]',
                exclude TEXT NOT NULL DEFAULT '[]',
                enabled_at REAL NOT NULL
            )""",
            """CREATE TABLE sync_outbox (
                id INTEGER PRIMARY KEY,
                episode_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                level TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                payload TEXT,
                state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN
                    ('queued', 'sent', 'set_aside', 'quarantined', 'superseded')),
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at REAL NOT NULL DEFAULT 0,
                last_error TEXT,
                created_at REAL NOT NULL,
                sent_at REAL,
                UNIQUE (episode_id, revision)
            )""",
            # Rows by state in queue order: the next batch is the first due rows of `queued`.
            "CREATE INDEX sync_outbox_state ON sync_outbox(state, id)",
            """CREATE TABLE sync_episodes (
                episode_id TEXT PRIMARY KEY,
                fingerprint TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                revision INTEGER NOT NULL
            )""",
        ],
    ),
    (
        # A workspace taken out of sync by name (`sync disable --workspace W`) stays out, also
        # under `--all`, until it is enabled again by name: a row with opted_out_at set.
        "m013_sync_opt_out",
        ["ALTER TABLE sync_workspaces ADD COLUMN opted_out_at REAL"],
    ),
]

SYNC_MIGRATIONS = MigrationSet("sync", tuple(_MIGRATIONS))


def sync_tables(conn: sqlite3.Connection) -> sqlite3.Connection:
    """The connection, once sync's tables on it are up to date (a cheap read when they are)."""
    apply_migration_set(conn, SYNC_MIGRATIONS)
    return conn


def open_store(path: Path, *, cache_kib: int | None = None) -> Store:
    """The store at ``path`` opened for sync: the core's schema and sync's tables current."""
    return Store.open(path, cache_kib=cache_kib, migration_sets=(SYNC_MIGRATIONS,))
