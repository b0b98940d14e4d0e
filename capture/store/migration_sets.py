"""Migrations a package registers with the store for the tables it owns.

A package beside the core (sync's settings and outbox) keeps its own tables in the local
database without the core knowing them: it names itself and lists its migrations, in order,
append only, and the store applies them when that package opens the store
(`Store.open(path, migration_sets=...)`) or hands it a connection (`apply_migration_set`). They
are recorded in the same bookkeeping as the core's (sqlite-utils' `_sqlite_migrations` table),
under the owner's name as the migration set; `PRAGMA user_version` stays the core's alone.

A migration the core released before it had an owner (`schema.MOVED_MIGRATIONS`) was recorded
under the core's set: found there, it counts as applied, and is recorded under its owner too.

Stdlib sqlite3 on the connection given, no sqlite-utils: the check that nothing is pending is one
indexed read, cheap enough for every call of an owner's store functions. Whatever is pending is
applied in one `BEGIN IMMEDIATE` transaction (or the caller's open one), so two processes
applying the same set at once take turns on the database's write lock and the second finds
nothing left to do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from capture.connection import sqlite3
from capture.store.schema import MIGRATION_SET, MOVED_MIGRATIONS

__all__ = ["MigrationSet", "Statements", "apply_migration_set", "pending_migrations"]

#: A migration's SQL statements, or a function returning them when it runs.
Statements = Sequence[str] | Callable[[], Sequence[str]]


@dataclass(frozen=True, slots=True)
class MigrationSet:
    """A package's own migrations: its name (the set they are recorded under) and the
    (name, statements) of each, in the order they apply. Append only: never edit a released
    migration; a new schema is a new migration."""

    owner: str
    migrations: tuple[tuple[str, Statements], ...]

    def __post_init__(self) -> None:
        if not self.owner or self.owner == MIGRATION_SET:
            raise ValueError(f"a migration set needs an owner of its own, not {self.owner!r}")
        names = [name for name, _ in self.migrations]
        if len(set(names)) != len(names):
            raise ValueError(f"migration set {self.owner!r} names a migration twice")
        foreign = [n for n in names if MOVED_MIGRATIONS.get(n, self.owner) != self.owner]
        if foreign:
            raise ValueError(f"{', '.join(foreign)} moved to another owner than {self.owner!r}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.migrations)


def _recorded(conn: sqlite3.Connection, migration_set: str) -> dict[str, str]:
    """Name -> applied_at of the migrations recorded under a set."""
    rows = conn.execute(
        "SELECT name, applied_at FROM _sqlite_migrations WHERE migration_set = ?",
        (migration_set,),
    )
    return {str(name): str(at) for name, at in rows}


def _complete(conn: sqlite3.Connection, migrations: MigrationSet) -> bool:
    """Every migration of the set recorded under its owner (one indexed count)."""
    (count,) = conn.execute(
        "SELECT count(*) FROM _sqlite_migrations WHERE migration_set = ?", (migrations.owner,)
    ).fetchone()
    # Append only: as many recorded as listed means every one listed (a newer release may have
    # recorded more).
    return int(count) >= len(migrations.migrations)


def _moved_here(conn: sqlite3.Connection, migrations: MigrationSet) -> dict[str, str]:
    """The set's migrations recorded under the core's set, released there before they moved."""
    return {
        name: at
        for name, at in _recorded(conn, MIGRATION_SET).items()
        if MOVED_MIGRATIONS.get(name) == migrations.owner
    }


def pending_migrations(conn: sqlite3.Connection, migrations: MigrationSet) -> list[str]:
    """The names of the set's migrations this database has not applied (a read)."""
    if _complete(conn, migrations):
        return []
    done = _recorded(conn, migrations.owner) | _moved_here(conn, migrations)
    return [name for name in migrations.names if name not in done]


def apply_migration_set(conn: sqlite3.Connection, migrations: MigrationSet) -> int:
    """Bring the owner's tables up to date on this connection (of a store the core has
    migrated); returns how many migrations ran. Inside the caller's transaction when one is
    open (it then commits or rolls them back with its own work), else in one of its own."""
    if _complete(conn, migrations):
        return 0
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        ran = _apply(conn, migrations)
        if own:
            conn.execute("COMMIT")
    except BaseException:
        if own and conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return ran


def _now() -> str:
    # As sqlite-utils writes it; imported here: every process that opens the store imports
    # this module, and few ever apply a migration.
    import datetime

    return str(datetime.datetime.now(datetime.UTC))


def _apply(conn: sqlite3.Connection, migrations: MigrationSet) -> int:
    # Read again under the write lock: another process may have applied them meanwhile.
    done = _recorded(conn, migrations.owner)
    moved = _moved_here(conn, migrations)
    ran = 0
    for name, statements in migrations.migrations:
        if name in done:
            continue
        applied_at = moved.get(name)
        if applied_at is None:
            for sql in statements() if callable(statements) else statements:
                conn.execute(sql)
            applied_at = _now()
            ran += 1
        conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, ?)",
            (migrations.owner, name, applied_at),
        )
    return ran
