"""Document leases: one owner per document's checkpoints.

The process that holds a file's unsaved buffer (an editor's `capture serve`) is the only one
that can judge the edits in it: the disk does not hold what the user sees. It takes a lease on
the file in the store and renews it; every other process (a hook's drain, a second server, the
watcher, `capture observe`) leaves the file's due checkpoints to it. A lease whose owner stopped
renewing it (the process died, the machine slept) lapses after `LEASE_TTL_S` and anyone may
take it over.

The API, for any source that observes files:

- `take_lease(conn, workspace_id, path, owner, now)`: hold the file (True), or False while
  another owner's lease is live. Call it when a buffer gets unsaved changes.
- `renew_leases(conn, owner, now)`: the heartbeat; call it more often than every
  `LEASE_TTL_S / 3` seconds while holding leases.
- `release_lease(conn, workspace_id, path, owner)`: the buffer was saved, reverted or closed;
  `release_all(conn, owner)` when the process stops.
- `leased_elsewhere(conn, owner, now)`: the (workspace id, path) pairs another owner holds now;
  an observer skips them (`capture.recording.observer.observe_due` does, given its owner).

`owner` is any string unique to the process (`owner_id()`: host, pid and start time). Each call
is one statement; the caller's transaction, if any, holds it.
"""

from __future__ import annotations

import os
import socket
import time

from capture.connection import sqlite3

__all__ = [
    "LEASE_TTL_S",
    "leased_elsewhere",
    "owner_id",
    "release_all",
    "release_lease",
    "renew_leases",
    "take_lease",
]

#: A lease not renewed for this long has lapsed.
LEASE_TTL_S = 15.0


def owner_id() -> str:
    """An owner name unique to this process."""
    return f"{socket.gethostname()}:{os.getpid()}:{time.time():.6f}"


def take_lease(
    conn: sqlite3.Connection, workspace_id: int, path: str, owner: str, now: float
) -> bool:
    """Hold the file's checkpoints: True when `owner` holds it now (taken, renewed, or taken
    over from a lapsed owner), False while another owner's lease is live."""
    conn.execute(
        """INSERT INTO document_leases (workspace_id, path, owner, renewed_at)
           VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, path) DO UPDATE
           SET owner = excluded.owner, renewed_at = excluded.renewed_at
           WHERE document_leases.owner = excluded.owner OR document_leases.renewed_at < ?""",
        (workspace_id, path, owner, now, now - LEASE_TTL_S),
    )
    row = conn.execute(
        "SELECT owner FROM document_leases WHERE workspace_id = ? AND path = ?",
        (workspace_id, path),
    ).fetchone()
    return row is not None and row[0] == owner


def renew_leases(conn: sqlite3.Connection, owner: str, now: float) -> int:
    """The heartbeat: renew every lease `owner` holds; returns how many."""
    return conn.execute(
        "UPDATE document_leases SET renewed_at = ? WHERE owner = ?", (now, owner)
    ).rowcount


def release_lease(conn: sqlite3.Connection, workspace_id: int, path: str, owner: str) -> None:
    conn.execute(
        "DELETE FROM document_leases WHERE workspace_id = ? AND path = ? AND owner = ?",
        (workspace_id, path, owner),
    )


def release_all(conn: sqlite3.Connection, owner: str) -> None:
    conn.execute("DELETE FROM document_leases WHERE owner = ?", (owner,))


def leased_elsewhere(
    conn: sqlite3.Connection, owner: str | None, now: float
) -> set[tuple[int, str]]:
    """(workspace id, path) of the files whose live lease another owner holds (None: any)."""
    rows = conn.execute(
        "SELECT workspace_id, path FROM document_leases WHERE renewed_at >= ? AND owner IS NOT ?",
        (now - LEASE_TTL_S, owner),
    )
    return {(int(r[0]), str(r[1])) for r in rows}
