"""`capture doctor --repair`: the rows SQLite can still read out of a damaged database, copied
into a new file that takes its place; the damaged file is kept beside it, renamed, with its WAL.

The copy walks each table in rowid order and steps over what it cannot read: a damaged page
fails every seek into its range of rowids, so the walk probes ever further ahead, then narrows
back to the first rowid past the damage, and goes on from there. Rows of a page that cannot be
read are lost; every other row is kept. (SQLite's own `.recover` also reads orphaned pages, but
it needs a library built with the page virtual table, which the common builds leave out.)

What counts as damage is decided by `is_damage`, a plain function over the error's text."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capture.connection import sqlite3
from capture.errors import StoreError

__all__ = ["DAMAGE_HINT", "Repaired", "is_damage", "repair"]

DAMAGE_HINT = (
    "`capture doctor --repair` recovers what can be read into a new file, keeping the old one"
)

_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "disk image")
_MAX_ROWID = (1 << 63) - 1
_MIN_ROWID = -(1 << 63)


def is_damage(message: str) -> bool:
    """The error SQLite gives for a damaged file (not a locked or missing one)."""
    lowered = message.lower()
    return any(word in lowered for word in _DAMAGE_WORDS)


@dataclass
class Repaired:
    database: Path
    kept: Path
    counts: dict[str, int] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    integrity: str = ""


def _readable_from(conn: sqlite3.Connection, query: str, start: int) -> bool:
    try:
        conn.execute(query, (start,)).fetchone()
        return True
    except sqlite3.DatabaseError:
        return False


def _skip_damage(conn: sqlite3.Connection, table: str, bad: int) -> int | None:
    """The first rowid past `bad` (where reading failed) from which the table reads again, or
    None."""
    query = f'SELECT rowid FROM "{table}" WHERE rowid >= ? ORDER BY rowid LIMIT 1'
    step, good = 1, None
    while bad <= _MAX_ROWID - step:
        probe = bad + step
        if _readable_from(conn, query, probe):
            good = probe
            break
        bad, step = probe, step * 2
    if good is None:
        return None
    while good - bad > 1:  # narrow back: the first start that reads
        mid = (bad + good) // 2
        if _readable_from(conn, query, mid):
            good = mid
        else:
            bad = mid
    return good


def _rows_by_rowid(conn: sqlite3.Connection, table: str) -> Iterator[tuple[Any, ...]]:
    """Batches while they read; near the damage, one row at a time (a single-row query stops
    before the next page, where a longer one may fail with rows of its own still whole)."""
    batch = f'SELECT rowid, * FROM "{table}" WHERE rowid >= ? ORDER BY rowid LIMIT 256'
    single = f'SELECT rowid, * FROM "{table}" WHERE rowid >= ? ORDER BY rowid LIMIT 1'
    start: int | None = _MIN_ROWID
    while start is not None:
        try:
            rows = conn.execute(batch, (start,)).fetchall()
        except sqlite3.DatabaseError:
            try:
                rows = conn.execute(single, (start,)).fetchall()
            except sqlite3.DatabaseError:
                start = _skip_damage(conn, table, start)
                continue
        if not rows:
            return
        for row in rows:
            yield tuple(row)
        last = int(rows[-1][0])
        start = last + 1 if last < _MAX_ROWID else None


def _rows_plain(conn: sqlite3.Connection, table: str) -> Iterator[tuple[Any, ...]]:
    """A table without rowids: read in key order until the damage."""
    try:
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            yield tuple(row)
    except sqlite3.DatabaseError:
        return


def _copy(old: sqlite3.Connection, new: sqlite3.Connection) -> tuple[dict[str, int], list[str]]:
    try:
        schema = old.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "ORDER BY rowid"
        ).fetchall()
        user_version = old.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"the database's list of tables cannot be read ({exc})") from None
    tables = [(n, s) for t, n, _, s in schema if t == "table" and not n.startswith("sqlite_")]
    counts: dict[str, int] = {}
    unreadable: list[str] = []
    new.execute("BEGIN")
    for _name, sql in tables:
        new.execute(sql)
    for name, sql in tables:
        try:
            info = old.execute(f'PRAGMA table_info("{name}")').fetchall()
        except sqlite3.DatabaseError:
            unreadable.append(name)
            continue
        columns = [str(c[1]) for c in info]
        quoted = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("?" for _ in columns)
        n = 0
        if "WITHOUT ROWID" in sql.upper():
            insert = f'INSERT OR IGNORE INTO "{name}" ({quoted}) VALUES ({marks})'
            for row in _rows_plain(old, name):
                new.execute(insert, row)
                n += 1
        else:
            insert = f'INSERT OR IGNORE INTO "{name}" (rowid, {quoted}) VALUES (?, {marks})'
            for row in _rows_by_rowid(old, name):
                new.execute(insert, row)
                n += 1
        counts[name] = n
    try:
        sequences = old.execute("SELECT name, seq FROM sqlite_sequence").fetchall()
    except sqlite3.DatabaseError:
        sequences = []
    if sequences:
        new.execute("DELETE FROM sqlite_sequence")
        new.executemany("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", sequences)
    # indexes and triggers last: the rows above went in as they were, not through the triggers
    for kind, _name, _table, sql in schema:
        if kind in ("index", "trigger", "view"):
            new.execute(sql)
    new.execute(f"PRAGMA user_version = {int(user_version)}")
    new.execute("COMMIT")
    return counts, unreadable


def repair(path: Path) -> Repaired:
    """Copy what `path` still holds into a new file and swap it in; the old file (and its WAL)
    kept as `<name>.damaged-<time>`. Raises StoreError with one line when it cannot."""
    if not path.exists():
        raise StoreError(f"{path}: no database to repair")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    fresh = path.with_name(f"{path.name}.recovering-{stamp}")
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    # read from a copy, so that nothing (a WAL replay, a checkpoint) writes to the damaged file
    source = path.with_name(f"{path.name}.reading-{stamp}")
    shutil.copyfile(path, source)
    wal = path.with_name(path.name + "-wal")
    if wal.exists():  # rows committed since the last checkpoint
        shutil.copyfile(wal, source.with_name(source.name + "-wal"))
    try:
        old = sqlite3.connect(source, isolation_level=None)
        new = sqlite3.connect(fresh, isolation_level=None)
        try:
            counts, unreadable = _copy(old, new)
            integrity = str(new.execute("PRAGMA integrity_check").fetchone()[0])
        finally:
            old.close()
            new.close()
    except sqlite3.DatabaseError as exc:
        fresh.unlink(missing_ok=True)
        raise StoreError(f"{path}: nothing could be recovered ({exc})") from None
    except BaseException:
        fresh.unlink(missing_ok=True)
        raise
    finally:
        for suffix in ("", "-wal", "-shm"):
            source.with_name(source.name + suffix).unlink(missing_ok=True)
    path.replace(kept)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(kept.with_name(kept.name + suffix))
    fresh.replace(path)
    return Repaired(path, kept, counts, unreadable, integrity)
