"""The hooks' queue: payloads as the fast lane received them (`hook_inbox`) and the files each
one named, as they were then (`hook_snapshots`), until the applier takes them off.

`queue_payload` runs in the fast lane, on every agent tool call: this module imports only
`capture.connection` (which the fast lane loads anyway), so reaching it costs one small module.
The rest runs on the applier's connection, inside the transaction its caller holds.
"""

from __future__ import annotations

from capture.connection import connect

# Not `from typing import ...`: the hook's fast lane pays for every import it makes.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from capture.connection import sqlite3

    #: A file as the fast lane read it: (path, content or None, size or None, problem or None).
    SnapshotRow = tuple[str, bytes | None, int | None, str | None]

__all__ = [
    "insert_payload",
    "left_in_queue",
    "queue_payload",
    "queued_count",
    "queued_rows",
    "requeue_set_aside",
    "set_aside_row",
    "set_aside_rows",
    "snapshot_rows",
    "take_off_queue",
]


def insert_payload(
    conn: sqlite3.Connection,
    at: float,
    agent: str,
    event: str | None,
    payload: bytes,
    cwd: str,
    env: str,
) -> int:
    """Queue one payload on `conn`, inside the caller's transaction; returns its id."""
    cursor = conn.execute(
        "INSERT INTO hook_inbox (at, agent, event, payload, cwd, env) VALUES (?, ?, ?, ?, ?, ?)",
        (at, agent, event, payload, cwd, env),
    )
    return int(cursor.lastrowid or 0)


def queue_payload(
    path: str,
    at: float,
    agent: str,
    event: str | None,
    payload: bytes,
    cwd: str,
    env: str,
    snapshots: Sequence[SnapshotRow],
    *,
    timeout: float,
) -> None:
    """Queue one payload with its files' snapshots in one transaction of a connection of its
    own. Raises the DB-API's errors, and UnicodeEncodeError for text SQLite cannot store."""
    conn = connect(path, timeout=timeout, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        conn.execute("BEGIN IMMEDIATE")
        inbox_id = insert_payload(conn, at, agent, event, payload, cwd, env)
        if snapshots:
            conn.executemany(
                "INSERT OR IGNORE INTO hook_snapshots (inbox_id, path, content, size, "
                "problem) VALUES (?, ?, ?, ?, ?)",
                [(inbox_id, *s) for s in snapshots],
            )
        conn.execute("COMMIT")
    finally:
        conn.close()


def queued_rows(conn: sqlite3.Connection, limit: int) -> list[Any]:
    """The next payloads to apply, oldest first (those set aside left out): rows with `id`,
    `at`, `agent`, `event`, `payload`, `cwd` and `env`."""
    return conn.execute(
        "SELECT id, at, agent, event, payload, cwd, env FROM hook_inbox "
        "WHERE set_aside_at IS NULL ORDER BY id LIMIT ?",
        (limit,),
    ).fetchall()


def snapshot_rows(conn: sqlite3.Connection, inbox_id: int) -> list[SnapshotRow]:
    """The files queued with payload `inbox_id`: (path, content, size, problem)."""
    rows = conn.execute(
        "SELECT path, content, size, problem FROM hook_snapshots WHERE inbox_id = ?",
        (inbox_id,),
    ).fetchall()
    return [(r[0], None if r[1] is None else bytes(r[1]), r[2], r[3]) for r in rows]


def take_off_queue(conn: sqlite3.Connection, inbox_id: int) -> None:
    """Remove an applied payload and its snapshots (inside the transaction that applied it)."""
    conn.execute("DELETE FROM hook_inbox WHERE id = ?", (inbox_id,))
    conn.execute("DELETE FROM hook_snapshots WHERE inbox_id = ?", (inbox_id,))


def set_aside_row(conn: sqlite3.Connection, inbox_id: int, error: str, now: float) -> None:
    """Mark a payload whose applying failed, with its error, and count the attempt."""
    conn.execute(
        "UPDATE hook_inbox SET set_aside_at = ?, error = ?, attempts = attempts + 1 WHERE id = ?",
        (now, error, inbox_id),
    )


def set_aside_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The payloads set aside, oldest first: id, when queued and set aside, agent, event,
    attempts, error."""
    rows = conn.execute(
        "SELECT id, at, set_aside_at, agent, event, attempts, error FROM hook_inbox "
        "WHERE set_aside_at IS NOT NULL ORDER BY id"
    ).fetchall()
    return [dict(row) for row in rows]


def requeue_set_aside(conn: sqlite3.Connection) -> list[int]:
    """Put every set-aside payload back in the queue; returns their ids."""
    ids = [
        int(r[0]) for r in conn.execute("SELECT id FROM hook_inbox WHERE set_aside_at IS NOT NULL")
    ]
    conn.execute("UPDATE hook_inbox SET set_aside_at = NULL WHERE set_aside_at IS NOT NULL")
    return ids


#: What a passing fault says (SQLite's words): the payload was fine, the moment was not.
_TRANSIENT = ("%disk is full%", "%database is locked%", "%database is busy%", "%disk I/O error%")


_TRANSIENT_ROWS = (
    "set_aside_at IS NOT NULL AND attempts < ? AND ("
    + " OR ".join("error LIKE ?" for _ in _TRANSIENT)
    + ")"
)


def any_transient(conn: sqlite3.Connection, *, max_attempts: int) -> bool:
    """Whether a set-aside payload's error was a passing fault (a read: no write lock)."""
    found = conn.execute(
        f"SELECT EXISTS (SELECT 1 FROM hook_inbox WHERE {_TRANSIENT_ROWS})",
        (max_attempts, *_TRANSIENT),
    ).fetchone()
    return bool(found[0])


def requeue_transient(conn: sqlite3.Connection, *, max_attempts: int) -> int:
    """Put back in the queue the set-aside payloads whose error was a passing fault, tried
    fewer than `max_attempts` times; returns how many."""
    cursor = conn.execute(
        f"UPDATE hook_inbox SET set_aside_at = NULL WHERE {_TRANSIENT_ROWS}",
        (max_attempts, *_TRANSIENT),
    )
    return cursor.rowcount


def left_in_queue(conn: sqlite3.Connection, ids: Sequence[int]) -> int:
    """How many of these payloads are still in the queue (set aside or not)."""
    marks = ",".join("?" * len(ids))
    row = conn.execute(f"SELECT count(*) FROM hook_inbox WHERE id IN ({marks})", list(ids))
    return int(row.fetchone()[0])


def queued_count(conn: sqlite3.Connection) -> int:
    """Payloads waiting to be applied, set-aside ones not counted."""
    row = conn.execute("SELECT count(*) FROM hook_inbox WHERE set_aside_at IS NULL").fetchone()
    return int(row[0])
