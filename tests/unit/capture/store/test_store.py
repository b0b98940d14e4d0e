from __future__ import annotations

from pathlib import Path

import pytest

from capture.connection import sqlite3
from capture.errors import StoreError
from capture.store.database import Store
from capture.store.schema import MOVED_MIGRATIONS, SCHEMA_VERSION


def test_open_creates_schema_in_wal(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "d" / "capture.db")
    conn = store.conn
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"episodes", "proposals", "hunks", "checkpoints", "test_runs", "events"} <= tables
    store.close()
    # Opening again applies nothing twice.
    again = Store.open(tmp_path / "d" / "capture.db")
    applied = again.conn.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()[0]
    # The moved migrations keep their place in the numbering; their owner applies them.
    assert applied == SCHEMA_VERSION - len(MOVED_MIGRATIONS)


def test_a_long_lived_connection_bounds_its_page_cache(tmp_path: Path) -> None:
    with Store.open(tmp_path / "c.db") as store:
        default = store.conn.execute("PRAGMA cache_size").fetchone()[0]
    with Store.open(tmp_path / "c.db", cache_kib=512) as store:
        assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == -512
    assert default != -512


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "capture.db"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer agent-capture"):
        Store.open(path)


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "capture.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open"):
        Store.open(path)


def test_events_are_appended_verbatim_and_pruned(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "capture.db")
    with store.transaction():
        store.append_event("hook", '{"raw": true}', at=100.0, source="claude-code")
        store.append_event("hook", {"n": 1}, at=200.0)
    rows = store.conn.execute("SELECT at, payload FROM events ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [(100.0, '{"raw": true}'), (200.0, '{"n": 1}')]
    assert store.prune_events(150.0) == 1
    assert store.conn.execute("SELECT count(*) FROM events").fetchone()[0] == 1


def test_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "capture.db")
    with pytest.raises(RuntimeError), store.transaction():
        store.append_event("hook", "x", at=1.0)
        raise RuntimeError("boom")
    assert store.conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_episode_grouping_by_ids_and_time_gap(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "capture.db")
    with store.transaction():
        ws = store.ensure_workspace("/ws", 0.0)
        a = store.ensure_episode(workspace_id=ws, agent="x", now=0.0, gap=300, turn_id="t1")
        b = store.ensure_episode(workspace_id=ws, agent="x", now=9999.0, gap=300, turn_id="t1")
        c = store.ensure_episode(workspace_id=ws, agent="x", now=0.0, gap=300, turn_id="t2")
        d = store.ensure_episode(workspace_id=ws, agent="y", now=10.0, gap=300)
        e = store.ensure_episode(workspace_id=ws, agent="y", now=200.0, gap=300)
        f = store.ensure_episode(workspace_id=ws, agent="y", now=900.0, gap=300)
    assert a == b and a != c
    assert d == e and e != f
