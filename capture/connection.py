"""The one place a SQLite connection is made, and the SQLite library this process uses.

Every process that writes the capture database (the store, the hook fast lane's queue, the
sync settings, the collector's SQLite storage) connects here, and every module of ours that
names the DB-API module (its errors, ``Row``, ``Connection``) takes it from here as
``sqlite3``, so that one library serves the whole process.

Why the library matters: several processes write one WAL database by design (editor windows,
hook commands, the watcher), and SQLite 3.7.0 to 3.51.2 hold a bug in the resetting of the
write-ahead log that can corrupt such a database under concurrent writers and checkpoints; 3.51.3
has the fix. Python's ``sqlite3`` module uses the system library (3.40.1 on Debian 12). The
DB-API modules that bundle their own library were checked by the version they report at run
time, not by their name: ``pysqlite3`` 0.6.1 bundles 3.53.4 (pysqlite3-binary 0.5.4 bundles
3.51.1, sqlean.py 3.50.4), so it is the library wherever it installs (a dependency on the
platforms it has wheels for). Elsewhere the stdlib module is the fallback, and
:func:`wal_reset_safe` lets ``capture doctor`` say when that library is in the affected range.

Why one library per process, never two: SQLite's locks on a database are POSIX advisory locks,
which the kernel drops for the whole process when *any* descriptor of the file is closed. One
library knows its own descriptors and defers such a close; two libraries in one process do not
know each other's, so one closing the file would silently release the other's locks. Errors
differ too: the stdlib's ``OperationalError`` does not catch pysqlite3's.
Kept to ``os`` and the DB-API module: the hook fast lane imports it.
"""

from __future__ import annotations

import os

# Not `from typing import ...`: the hook's fast lane pays for every import it makes.
TYPE_CHECKING = False
if TYPE_CHECKING:
    # The same DB-API 2.0 surface; the stdlib's stubs type both.
    import sqlite3
else:
    try:
        from pysqlite3 import dbapi2 as sqlite3
    except ImportError:  # no wheel for this platform: the system's library
        import sqlite3

__all__ = ["SAFE_SQLITE", "connect", "library_name", "sqlite3", "sqlite_version", "wal_reset_safe"]

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


def library_name() -> str:
    """Which DB-API module carries that library: ``pysqlite3`` (bundled) or ``sqlite3``
    (the system's, through the stdlib)."""
    return sqlite3.__name__.split(".")[0]


def wal_reset_safe(version: str) -> bool:
    """Is SQLite ``version`` (``"3.51.3"``) free of the WAL-reset corruption bug?"""
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts) >= SAFE_SQLITE or tuple(parts) < (3, 7, 0)
