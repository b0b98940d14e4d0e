"""Sync's settings rows: the one `sync_settings` row (on or off, where to, the salt, the last
run) and the opt-ins of `sync_workspaces` (one row per workspace root, `*` for `--all`; a row
with `opted_out_at` set is a workspace taken out by name).

What the rows mean (which opt-in covers a workspace, what `enable` keeps) is decided in
`sync.settings`; this module reads and writes them, and drops what an opt-in no longer lets go.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from capture.connection import sqlite3
from sync.store.schema import sync_tables

__all__ = [
    "ALL",
    "OptInRow",
    "drop_queued",
    "enabled",
    "keep_salt",
    "opt_in",
    "opt_out",
    "own_opt_in",
    "record_failure",
    "record_success",
    "settings_row",
    "stored_salt",
    "turn_off",
    "turn_on",
    "workspace_rows",
]

#: The `sync_workspaces` root that stands for every workspace (`--all`).
ALL = "*"


class OptInRow(NamedTuple):
    root: str
    level: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    opted_out_at: float | None = None


def enabled(conn: sqlite3.Connection) -> bool:
    """Is sync turned on? A plain read that creates nothing: it raises `sqlite3.Error` when
    the store has no sync tables (sync was never used there)."""
    row = conn.execute("SELECT enabled FROM sync_settings WHERE id = 1").fetchone()
    return bool(row and row[0])


def settings_row(conn: sqlite3.Connection) -> sqlite3.Row | None:
    return sync_tables(conn).execute("SELECT * FROM sync_settings WHERE id = 1").fetchone()


def workspace_rows(conn: sqlite3.Connection) -> list[OptInRow]:
    """Every workspace row, opted in or out, by root."""
    rows = sync_tables(conn).execute(
        "SELECT root, level, include, exclude, opted_out_at FROM sync_workspaces ORDER BY root"
    )
    return [
        OptInRow(root, level, tuple(json.loads(inc)), tuple(json.loads(exc)), out)
        for root, level, inc, exc, out in rows
    ]


def own_opt_in(conn: sqlite3.Connection, root: str) -> OptInRow | None:
    """The row of `root` itself (opted out or not), if it has one."""
    row = (
        sync_tables(conn)
        .execute(
            "SELECT level, include, exclude, opted_out_at FROM sync_workspaces WHERE root = ?",
            (root,),
        )
        .fetchone()
    )
    if row is None:
        return None
    return OptInRow(root, row[0], tuple(json.loads(row[1])), tuple(json.loads(row[2])), row[3])


def stored_salt(conn: sqlite3.Connection) -> bytes | None:
    row = sync_tables(conn).execute("SELECT salt FROM sync_settings WHERE id = 1").fetchone()
    return bytes(row[0]) if row is not None and row[0] else None


def keep_salt(conn: sqlite3.Connection, candidate: bytes) -> bytes:
    """Store `candidate` unless a salt is stored already; the stored one either way (concurrent
    first uses agree on one value)."""
    sync_tables(conn).execute(
        "UPDATE sync_settings SET salt = ? WHERE id = 1 AND salt IS NULL", (candidate,)
    )
    return bytes(conn.execute("SELECT salt FROM sync_settings WHERE id = 1").fetchone()[0])


def turn_on(conn: sqlite3.Connection, *, url: str, token: str, now: float) -> None:
    sync_tables(conn).execute(
        "UPDATE sync_settings SET enabled = 1, url = ?, token = ?, updated_at = ? WHERE id = 1",
        (url, token, now),
    )


def opt_in(
    conn: sqlite3.Connection,
    *,
    root: str,
    level: str,
    include: Sequence[str],
    exclude: Sequence[str],
    now: float,
) -> None:
    """`root` in, at this level and with these globs. A workspace named here is no longer
    opted out; `--all` (ALL) leaves the opted-out rows alone."""
    sync_tables(conn).execute(
        """INSERT INTO sync_workspaces (root, level, include, exclude, enabled_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT (root) DO UPDATE SET level = excluded.level,
           include = excluded.include, exclude = excluded.exclude,
           enabled_at = excluded.enabled_at, opted_out_at = NULL""",
        (root, level, json.dumps(list(include)), json.dumps(list(exclude)), now),
    )


def turn_off(conn: sqlite3.Connection, *, now: float) -> None:
    """Sync off, and every opt-in removed (the workspaces taken out by name stay out)."""
    sync_tables(conn).execute(
        "UPDATE sync_settings SET enabled = 0, updated_at = ? WHERE id = 1", (now,)
    )
    conn.execute("DELETE FROM sync_workspaces WHERE opted_out_at IS NULL")


def opt_out(conn: sqlite3.Connection, *, root: str, level: str, now: float) -> None:
    """`root` taken out by name (its row, if any, keeps its level and globs)."""
    sync_tables(conn).execute(
        """INSERT INTO sync_workspaces (root, level, enabled_at, opted_out_at)
           VALUES (?, ?, ?, ?) ON CONFLICT (root) DO UPDATE SET
           opted_out_at = excluded.opted_out_at""",
        (root, level, now, now),
    )


def _scope(root: str | None) -> tuple[str, tuple[Any, ...]]:
    """SQL for the ids of the episodes concerned, and its parameters: every queued one (None),
    those an opt-in of ALL covers (every workspace without a row of its own), or a workspace's
    own."""
    if root is None:
        return "SELECT episode_id FROM sync_outbox WHERE state = 'queued'", ()
    if root == ALL:
        return (
            """SELECT e.id FROM episodes e JOIN workspaces w ON w.id = e.workspace_id
               WHERE w.root NOT IN (SELECT root FROM sync_workspaces WHERE root != '*')""",
            (),
        )
    return (
        """SELECT e.id FROM episodes e JOIN workspaces w ON w.id = e.workspace_id
           WHERE w.root = ?""",
        (root,),
    )


def drop_queued(conn: sqlite3.Connection, root: str | None) -> int:
    """Drop the queued outbox rows of the episodes an opt-in of `root` covers (of every queued
    episode for None), and what was last projected of them (so that they are projected afresh
    if they are covered again). Returns how many rows were dropped."""
    scope, params = _scope(root)
    sync_tables(conn).execute(f"DELETE FROM sync_episodes WHERE episode_id IN ({scope})", params)
    return int(
        conn.execute(
            f"DELETE FROM sync_outbox WHERE state = 'queued' AND episode_id IN ({scope})", params
        ).rowcount
        or 0
    )


def record_success(conn: sqlite3.Connection, *, at: float) -> None:
    sync_tables(conn).execute(
        """UPDATE sync_settings SET last_run_at = ?, last_success_at = ?, last_error = NULL
           WHERE id = 1""",
        (at, at),
    )


def record_failure(conn: sqlite3.Connection, *, at: float, error: str | None) -> None:
    sync_tables(conn).execute(
        "UPDATE sync_settings SET last_run_at = ?, last_error = ? WHERE id = 1", (at, error)
    )
