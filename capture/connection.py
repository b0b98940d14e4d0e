"""The one place a SQLite connection is made, and what this process's SQLite library is.

Every process that writes the capture database (the store, the hook fast lane's queue, the
sync settings, the collector's SQLite storage) connects here, so that the library behind all
of them is chosen, and checked, in one place.

Why the version matters: several processes write one WAL database by design (editor windows,
hook commands, the watcher), and SQLite 3.7.0 to 3.51.2 hold a bug in the resetting of the
write-ahead log that can corrupt such a database under concurrent writers and checkpoints; 3.51.3
has the fix. Python's ``sqlite3`` module uses the system library (3.40.1 on Debian 12). The
DB-API modules that bundle their own library were checked by the version they report at run
time, not by their name: none bundles 3.51.3 yet (pysqlite3-binary 0.5.4 bundles 3.51.1,
sqlean.py 3.50.4), and apsw (3.54) is not a DB-API module. So this uses the stdlib module, and
:func:`wal_reset_safe` lets ``capture doctor`` say when the library is in the affected range.
Kept to ``os`` and ``sqlite3``: the hook fast lane imports it.
"""

from __future__ import annotations

import os
import sqlite3

__all__ = ["SAFE_SQLITE", "connect", "sqlite_version", "wal_reset_safe"]

#: The first SQLite release without the WAL-reset corruption bug (present from 3.7.0).
SAFE_SQLITE = (3, 51, 3)


def connect(
    path: str | os.PathLike[str],
    *,
    timeout: float,
    isolation_level: str | None = "",
    check_same_thread: bool = True,
) -> sqlite3.Connection:
    """A connection to the database at ``path`` with a busy wait of ``timeout`` seconds
    (the library's busy handler, and the same as ``PRAGMA busy_timeout``). ``isolation_level``
    as the stdlib's: "" opens transactions implicitly, None leaves them to explicit BEGINs."""
    return sqlite3.connect(
        path,
        timeout=timeout,
        isolation_level=isolation_level,  # type: ignore[arg-type]  # one of the stdlib's
        check_same_thread=check_same_thread,
    )


def sqlite_version() -> str:
    """The version of the SQLite library this process's connections use."""
    return sqlite3.sqlite_version


def wal_reset_safe(version: str) -> bool:
    """Is SQLite ``version`` (``"3.51.3"``) free of the WAL-reset corruption bug?"""
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts) >= SAFE_SQLITE or tuple(parts) < (3, 7, 0)
