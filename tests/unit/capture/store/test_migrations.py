"""Released migrations never change: a database migrated by an earlier release must end up
with the tables, triggers and indexes a new one gets. A new schema is a new migration.

Sync's migrations were released in the core's set and moved to sync's own (registered with the
store): a database that applied them there is current for sync without applying them again."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from sqlite_utils.migrations import Migrations

from capture.cli import main
from capture.config import load_config
from capture.connection import connect, sqlite3
from capture.recording.late_tiers import recompute_tiers
from capture.store import schema
from capture.store.database import Store
from capture.store.migration_sets import MigrationSet, apply_migration_set, pending_migrations
from capture.store.tier_rows import current_tiers
from capture.tiers.model import Tier
from sync import sync_enabled
from sync.outbox import Outbox
from sync.settings import load_settings
from sync.store.schema import SYNC_MIGRATIONS, open_store, sync_tables
from tests.support.synthetic_episodes import make_episode, write_episodes

#: sha256 of each migration's statements as released (joined by "\n;\n"), first 16 digits.
RELEASED = {
    "m001_initial": "2bc4508a539ef106",
    "m002_test_runs": "a03bd0eae999a29c",
    "m003_hooks": "832e1da67d53e257",
    "m006_report": "c687e9ef6a5e0304",
    "m005_sync": "89ec758903d1bf82",
    "m013_sync_opt_out": "54f20e48b7bcad79",
}

#: The core's set as released before sync's migrations moved out, in the order it applied them.
BEFORE_THE_MOVE = (
    "m001_initial",
    "m002_test_runs",
    "m003_hooks",
    "m006_report",
    "m005_sync",
    "m007_outcomes",
    "m008_inbox_set_aside",
    "m009_tier_history",
    "m011_late_signals",
    "m013_sync_opt_out",
)

Statements = Sequence[str] | Callable[[], Sequence[str]]


def _sql(statements: Statements) -> list[str]:
    return list(statements() if callable(statements) else statements)


def test_released_migrations_keep_their_sql() -> None:
    found = {}
    for name, statements in [*schema._MIGRATIONS, *SYNC_MIGRATIONS.migrations]:
        found[name] = hashlib.sha256("\n;\n".join(_sql(statements)).encode()).hexdigest()[:16]
    assert {name: found.get(name) for name in RELEASED} == RELEASED


def test_the_moved_migrations_are_syncs_and_keep_their_place_in_the_numbering() -> None:
    core = [name for name, _ in schema._MIGRATIONS]
    assert set(schema.MOVED_MIGRATIONS) == set(SYNC_MIGRATIONS.names)
    assert not set(core) & set(SYNC_MIGRATIONS.names)
    assert [n for n in BEFORE_THE_MOVE if n not in schema.MOVED_MIGRATIONS] == core[:8]
    assert len(core) + len(schema.MOVED_MIGRATIONS) == schema.SCHEMA_VERSION


def _running(sql: list[str]) -> Callable[[Any], None]:
    def apply(db: Any) -> None:
        for statement in sql:
            db.execute(statement)

    return apply


def database_before_the_move(path: Path, upto: str = BEFORE_THE_MOVE[-1]) -> None:
    """A database as the releases before the move left it: the migrations of BEFORE_THE_MOVE
    (up to `upto`) applied and recorded under the core's set, user_version their number."""
    statements: dict[str, Statements] = dict([*schema._MIGRATIONS, *SYNC_MIGRATIONS.migrations])
    names = BEFORE_THE_MOVE[: BEFORE_THE_MOVE.index(upto) + 1]
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite_utils.Database(connect(path, timeout=5.0))
    db.execute("PRAGMA journal_mode=WAL")
    migrations = Migrations(schema.MIGRATION_SET)
    for name in names:
        migrations(name=name)(_running(_sql(statements[name])))
    migrations.apply(db)
    db.execute(f"PRAGMA user_version={len(names)}")
    db.close()


def _schema(conn: sqlite3.Connection) -> list[tuple[str, str, str | None]]:
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE '%sqlite%' "
            "ORDER BY type, name"
        )
    ]


def _recorded(conn: sqlite3.Connection, migration_set: str) -> dict[str, str]:
    rows = conn.execute(
        "SELECT name, applied_at FROM _sqlite_migrations WHERE migration_set = ?",
        (migration_set,),
    )
    return dict(rows.fetchall())


def test_a_new_database_gets_syncs_tables_from_sync_only(tmp_path: Path) -> None:
    db = tmp_path / "capture.db"
    with Store.open(db) as store:  # what a hook or the server opens: the core alone
        names = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        assert not {n for n in names if n.startswith("sync_")}
        assert pending_migrations(store.conn, SYNC_MIGRATIONS) == list(SYNC_MIGRATIONS.names)
        # The core's reader of sync's flag finds none, as before sync was ever used.
        assert recompute_tiers(store, None, now=1.0).episodes == 0
    assert not sync_enabled(db)
    with open_store(db) as store:
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        assert {"sync_settings", "sync_workspaces", "sync_outbox", "sync_episodes"} <= tables
        assert pending_migrations(store.conn, SYNC_MIGRATIONS) == []
        assert set(_recorded(store.conn, "sync")) == set(SYNC_MIGRATIONS.names)
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        # Applied once: opening again, or asking on the connection, runs nothing.
        assert apply_migration_set(store.conn, SYNC_MIGRATIONS) == 0
    assert not sync_enabled(db)


def test_a_database_from_before_the_move_is_current_and_gets_the_same_tables(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old.db"
    database_before_the_move(old)
    with Store.open(old) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        assert pending_migrations(store.conn, SYNC_MIGRATIONS) == []
        before = _recorded(store.conn, schema.MIGRATION_SET)
        # Recognised, not run again (their CREATE TABLE would fail): recorded under sync's set
        # as they were applied.
        assert apply_migration_set(store.conn, SYNC_MIGRATIONS) == 0
        assert _recorded(store.conn, "sync") == {n: before[n] for n in SYNC_MIGRATIONS.names}
        assert _recorded(store.conn, schema.MIGRATION_SET) == before
        upgraded = _schema(store.conn)
    with open_store(tmp_path / "new.db") as store:
        assert _schema(store.conn) == upgraded


def test_a_database_stopped_halfway_before_the_move_is_brought_up_to_date(
    tmp_path: Path,
) -> None:
    """Stamped 8 by the numbering before the move (m005_sync in, m011 and m013 not): the core
    applies its own missing migration, sync applies its own."""
    db = tmp_path / "capture.db"
    database_before_the_move(db, upto="m009_tier_history")
    with open_store(db) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        assert store.conn.execute("SELECT count(*) FROM late_signals").fetchone()[0] == 0
        columns = {r[1] for r in store.conn.execute("PRAGMA table_info(sync_workspaces)")}
        assert "opted_out_at" in columns
        upgraded = _schema(store.conn)
    with open_store(tmp_path / "new.db") as store:
        assert _schema(store.conn) == upgraded


def test_sync_works_on_a_database_from_before_the_move(
    capture_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Settings, outbox, quarantine and preview, on what the release before the move wrote."""
    db = load_config().paths.db
    database_before_the_move(db)
    ws = tmp_path / "ws"
    ws.mkdir()
    rng = random.Random(3)
    episodes = [make_episode(rng, i, root=str(ws)) for i in range(4)]
    with Store.open(db) as store:
        write_episodes(store, episodes, now=1.0)
    salt = bytes(range(32))
    conn = connect(db, timeout=5.0)
    with conn:  # what `capture sync enable` and an upload wrote then
        conn.execute(
            "UPDATE sync_settings SET enabled = 1, url = 'https://c.example', token = 't', "
            "salt = ?, updated_at = 1 WHERE id = 1",
            (salt,),
        )
        conn.execute(
            "INSERT INTO sync_workspaces (root, level, include, exclude, enabled_at) "
            "VALUES (?, 'metrics', '[]', '[\"secret/**\"]', 1)",
            (str(ws),),
        )
        conn.execute(
            "INSERT INTO sync_outbox (episode_id, revision, level, content_hash, payload, state, "
            "attempts, created_at, sent_at) VALUES (?, 1, 'metrics', 'old', '{}', 'sent', 1, 1, 2)",
            (episodes[0]["id"],),
        )
        conn.execute(
            "INSERT INTO sync_outbox (episode_id, revision, level, content_hash, state, "
            "last_error, created_at) VALUES (?, 1, 'metrics', 'q', 'quarantined', 'a key', 1)",
            (episodes[1]["id"],),
        )
    conn.close()
    assert sync_enabled(db)

    with Store.open(db) as store:
        settings = load_settings(store.conn)
        assert settings.active and settings.url == "https://c.example"
        opt_in = settings.opt_in_for(str(ws))
        assert opt_in is not None and opt_in.level.value == "metrics"
        assert opt_in.exclude == ("secret/**",) and settings.opted_out == ()
        assert Outbox(store.conn).counts() == {
            "queued": 0, "sent": 1, "set_aside": 0, "quarantined": 1, "superseded": 0,
        }  # fmt: skip
        recompute_tiers(store, None, now=10.0)
        assert current_tiers(store.conn, "episode")[episodes[1]["id"]].tier == Tier.QUARANTINE

    assert main(["sync", "preview", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    sent = {(e["id"], e["revision"], e["level"]) for e in body["episodes"]}
    # Every settled episode; those with a row from before get their next revision.
    assert sent == {
        (episodes[0]["id"], 2, "metrics"),
        (episodes[1]["id"], 2, "metrics"),
        (episodes[2]["id"], 1, "metrics"),
        (episodes[3]["id"], 1, "metrics"),
    }
    with Store.open(db) as store:
        assert bytes(store.conn.execute("SELECT salt FROM sync_settings").fetchone()[0]) == salt
        assert Outbox(store.conn).counts()["queued"] == 4


def test_an_owners_migrations_apply_with_the_callers_transaction(tmp_path: Path) -> None:
    with Store.open(tmp_path / "capture.db") as store:
        with pytest.raises(RuntimeError), store.transaction() as conn:
            sync_tables(conn)
            assert conn.execute("SELECT count(*) FROM sync_outbox").fetchone()[0] == 0
            raise RuntimeError("the caller's work failed")
        # Rolled back with it, and applied again when next asked.
        assert pending_migrations(store.conn, SYNC_MIGRATIONS) == list(SYNC_MIGRATIONS.names)
        outbox = sync_tables(store.conn).execute("SELECT count(*) FROM sync_outbox")
        assert outbox.fetchone()[0] == 0
        assert pending_migrations(store.conn, SYNC_MIGRATIONS) == []


def test_a_migration_set_is_its_owners_alone() -> None:
    with pytest.raises(ValueError, match="owner of its own"):
        MigrationSet(schema.MIGRATION_SET, (("m1", ["SELECT 1"]),))
    with pytest.raises(ValueError, match="twice"):
        MigrationSet("other", (("m1", ["SELECT 1"]), ("m1", ["SELECT 2"])))
    with pytest.raises(ValueError, match="m005_sync moved to another owner"):
        MigrationSet("other", (("m005_sync", ["SELECT 1"]),))
