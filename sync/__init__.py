"""The opt-in upload of anonymized episodes (and, in sync/collector, the team collector).

    anonymize/   the projection of an episode at a level, scrubbed of secrets and identity
    settings     on or off, the opt-ins per workspace, the salt, the uploader's pacing
    outbox       what an answer or a failure means for each row, and `Outbox`, its rows typed
    refresh      filling the outbox: what changed, projected, as new revisions
    uploader     draining the outbox to the collector (httpx)
    service      what `capture sync now` and the server's background uploader run
    lock         one uploader at a time
    store/       sync's tables (its own migrations, registered with the store) and every SQL
                 statement sync runs on the local database
    collector/   the team collector: its own server and storage

Importing this package costs nothing: `sync_enabled` is all a caller that merely needs to know
whether to start anything must import.
"""

from __future__ import annotations

from pathlib import Path

from capture.connection import connect, sqlite3

__all__ = ["sync_enabled"]


def sync_enabled(db_path: Path) -> bool:
    """Is sync turned on in this store? (A plain read that creates nothing; of sync/ it imports
    only the settings rows, not the anonymizer.)"""
    from sync.store import settings_rows

    if not db_path.exists():
        return False
    try:
        conn = connect(db_path, timeout=5)
        try:
            return settings_rows.enabled(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return False  # no sync tables yet: never enabled
