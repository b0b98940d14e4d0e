"""A backfill writes transcripts in batches and adds their rows to the report rollups once per
batch rather than by a trigger per row: the rollups come out as the triggers would leave them,
the triggers are back afterwards, and a failing transcript leaves the earlier ones recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.config import load_config
from capture.connection import sqlite3
from capture.importers import backfill
from capture.importers.backfill import import_files
from capture.importers.claude_transcript import read_transcript
from capture.importers.write import ImportStats, record_history
from capture.store.database import Store
from tests.support.hook_support import example_text, make_workspace
from tests.unit.capture.report.test_report_rollups import assert_consistent

SESSION = "8f1c2a40-5d7e-4b1a-9c33-2e6f0b7d9a11"
NOW = 1_790_000_000.0


def transcripts(tmp_path: Path, count: int) -> list[Path]:
    """The example session told `count` times, as other sessions on other days."""
    ws = make_workspace(tmp_path)
    base = example_text("claude_code_transcript_sample.jsonl", ws)
    folder = tmp_path / "history"
    folder.mkdir()
    paths = []
    for i in range(count):
        text = base.replace(SESSION, f"8f1c2a40-5d7e-4b1a-9c33-{i:012x}")
        text = text.replace("toolu_01", f"toolu_{i:03d}").replace(
            "2026-08-21T", f"2026-08-{i + 1:02d}T"
        )
        path = folder / f"{i:04d}.jsonl"
        path.write_text(text)
        paths.append(path)
    return paths


def rollups(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    found = {}
    for table in ("report_counts", "report_retention", "report_tests"):
        rows = conn.execute(f"SELECT * FROM {table}").fetchall()
        found[table] = sorted(
            tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows
        )
    found["report_episodes"] = sorted(
        tuple(r)[1:] for r in conn.execute("SELECT * FROM report_episodes")
    )
    return found


def triggers(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    return {
        tuple(r) for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    }


@pytest.fixture
def stores(tmp_path: Path, capture_home: Path) -> tuple[Store, Store]:
    return Store.open(tmp_path / "batched.db"), Store.open(tmp_path / "one-by-one.db")


def test_a_batched_import_leaves_the_rollups_the_triggers_would(
    tmp_path: Path, stores: tuple[Store, Store]
) -> None:
    batched, one_by_one = stores
    config = load_config()
    files = transcripts(tmp_path, 20)
    assert len(files) >= backfill.PARALLEL_FROM  # through the worker processes
    stats = import_files(batched, config, "claude-code", read_transcript, files, now=NOW, workers=2)
    assert (stats.files, stats.proposals, stats.runs) == (20, 20, 20)
    for path in files:
        with path.open() as fh:
            history = read_transcript(fh)
        record_history(one_by_one, config, history, now=NOW, stats=ImportStats())

    assert rollups(batched.conn) == rollups(one_by_one.conn)
    assert len(rollups(batched.conn)["report_retention"]) > 20
    assert_consistent(batched.conn)
    assert triggers(batched.conn) == triggers(one_by_one.conn)

    # again, every transcript changed since: nothing is recorded twice, nothing counted twice
    for path in files:
        with path.open("a") as fh:
            fh.write("\n")
    again = import_files(batched, config, "claude-code", read_transcript, files, now=NOW, workers=2)
    assert (again.files, again.proposals, again.known) == (20, 0, 20)
    assert rollups(batched.conn) == rollups(one_by_one.conn)


def test_a_failing_transcript_leaves_the_earlier_ones_and_the_triggers(
    tmp_path: Path, stores: tuple[Store, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, fresh = stores
    written = []
    write = backfill.write

    def fail_third(*args: object, **kwargs: object) -> None:
        if len(written) == 2:
            raise RuntimeError("disk on fire")
        write(*args, **kwargs)  # type: ignore[arg-type]
        written.append(1)

    monkeypatch.setattr(backfill, "write", fail_third)
    files = transcripts(tmp_path, 4)
    with pytest.raises(RuntimeError, match="disk on fire"):
        import_files(
            store, load_config(), "claude-code", read_transcript, files, now=NOW, workers=1
        )

    assert store.conn.execute("SELECT count(*) FROM proposals").fetchone()[0] == 2
    assert store.conn.execute("SELECT count(*) FROM imported_files").fetchone()[0] == 2
    assert triggers(store.conn) == triggers(fresh.conn)
    assert_consistent(store.conn)
