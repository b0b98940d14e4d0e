"""Test runs in a real SQLite store: the late link, per-test results, and a database written
before test-run linking existed, upgraded in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.config import Config
from capture.connection import sqlite3
from capture.edits.windows import parse_windows
from capture.model import CaseResult, HunkInput, Outcome, ProposalInput, TestRunInput
from capture.paths import Paths
from capture.recording.recorder import record_proposal, record_test_run
from capture.store import schema
from capture.store.database import Store
from capture.store.episodes import load_episodes

HOUR = 3600.0


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Store, Config, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    paths = Paths(tmp_path / "data", tmp_path / "config", tmp_path / "state")
    config = Config(paths=paths, windows=parse_windows("1m"))
    return Store.open(paths.db), config, ws


def propose(store: Store, config: Config, ws: Path, name: str, turn: str, now: float) -> str:
    (ws / name).write_text("x = 1\n")
    proposal = ProposalInput(
        path=str(ws / name),
        workspace=str(ws),
        agent="claude-code",
        hunks=[HunkInput("x = 0\n", "x = 1\n")],
        session_id="s",
        turn_id=turn,
    )
    proposal_id = record_proposal(store, config, proposal, now=now)
    return str(store.proposal_row(proposal_id)["episode_id"])


def run(
    ws: Path, at: float, failed: int = 0, cases: list[CaseResult] | None = None
) -> TestRunInput:
    return TestRunInput(
        command="pytest",
        source="wrapper",
        started_at=at,
        workspace=str(ws),
        duration_s=1.0,
        exit_code=1 if failed else 0,
        passed=3,
        failed=failed,
        errors=0,
        skipped=0,
        runner="pytest",
        cases=cases or [],
    )


def test_a_run_after_settling_links_the_last_settled_episode_late(
    setup: tuple[Store, Config, Path],
) -> None:
    store, config, ws = setup
    t0 = 1_000_000.0
    first = propose(store, config, ws, "a.py", "t1", t0)
    second = propose(store, config, ws, "b.py", "t2", t0 + 10)
    with store.transaction():
        for episode, settled in ((first, t0 + 100), (second, t0 + 200)):
            (proposal_id,) = [
                r[0]
                for r in store.conn.execute(
                    "SELECT id FROM proposals WHERE episode_id = ?", (episode,)
                )
            ]
            store.set_outcome(
                proposal_id,
                outcome=Outcome.KEPT,
                reason="kept",
                similarity=1.0,
                retention=1.0,
                settled_at=settled,
            )
    during = record_test_run(store, run(ws, t0 + 150, failed=1), now=t0 + 151)
    late = record_test_run(store, run(ws, t0 + HOUR), now=t0 + HOUR + 1)
    too_late = record_test_run(store, run(ws, t0 + 30 * HOUR), now=t0 + 30 * HOUR)

    episodes = {e["id"]: e for e in load_episodes(store)}
    # While the second episode is open, the first (settled just before) is still linked late.
    assert [(r["id"], r["link"]) for r in episodes[first]["test_runs"]] == [(during, "late")]
    assert [(r["id"], r["link"]) for r in episodes[second]["test_runs"]] == [
        (during, "open"),
        (late, "late"),
    ]
    tests = episodes[second]["tests"]
    assert tests["first_run_after"]["id"] == during
    assert tests["last_run_before_settling"]["id"] == during
    assert tests["transition"] is None
    assert all(too_late not in [r["id"] for r in e["test_runs"]] for e in episodes.values())


def test_per_test_results_are_kept_and_failures_carry_their_files(
    setup: tuple[Store, Config, Path],
) -> None:
    store, config, ws = setup
    episode = propose(store, config, ws, "test_a.py", "t1", 1_000.0)
    cases = [
        CaseResult("test_a.py::test_ok", "passed", "test_a.py", None, 0.01),
        CaseResult("test_a.py::test_bad", "failed", "test_a.py", None, 0.02),
        CaseResult("com.x.FooTest.adds", "error", None, "com.x.FooTest", None),
    ]
    record_test_run(store, run(ws, 1_001.0, failed=1, cases=cases), now=1_002.0)
    rows = store.conn.execute(
        "SELECT test_id, outcome, file, classname FROM test_results ORDER BY idx"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        ("test_a.py::test_ok", "passed", "test_a.py", None),
        ("test_a.py::test_bad", "failed", "test_a.py", None),
        ("com.x.FooTest.adds", "error", None, "com.x.FooTest"),
    ]
    (e,) = load_episodes(store, ids=[episode])
    assert e["tests"]["failing_tests_in_edited_files"] == ["test_a.py::test_bad"]
    assert e["tests"]["tests_edited_by_agent"] is True


def test_failing_ids_without_results_become_failing_results(
    setup: tuple[Store, Config, Path],
) -> None:
    store, config, ws = setup
    (ws / "pkg").mkdir()
    episode = propose(store, config, ws, "pkg/test_b.py", "t1", 1_000.0)
    summary_run = run(ws, 1_001.0, failed=1)
    summary_run.cwd = str(ws / "pkg")  # pytest printed ids relative to pkg/
    summary_run.failing_ids = ["test_b.py::test_x", "TestGo"]
    record_test_run(store, summary_run, now=1_002.0)
    (e,) = load_episodes(store, ids=[episode])
    assert e["test_runs"][0]["failing_ids"] == ["test_b.py::test_x", "TestGo"]
    assert e["tests"]["failing_tests_in_edited_files"] == ["test_b.py::test_x"]


def test_a_database_from_before_test_run_linking_is_upgraded(tmp_path: Path) -> None:
    db = tmp_path / "capture.db"
    conn = sqlite3.connect(db)
    for sql in schema._MIGRATIONS[0][1]:
        conn.execute(sql)
    conn.execute(
        "CREATE TABLE _sqlite_migrations (migration_set TEXT, name TEXT, applied_at TEXT, "
        "PRIMARY KEY (migration_set, name))"
    )
    conn.execute("INSERT INTO _sqlite_migrations VALUES ('capture', 'm001_initial', '2026-01-01')")
    conn.execute("INSERT INTO workspaces (id, root, created_at) VALUES (1, '/ws', 1)")
    conn.execute(
        "INSERT INTO episodes (id, workspace_id, agent, started_at, last_at) "
        "VALUES ('e1', 1, 'cli', 1, 1)"
    )
    conn.execute(
        "INSERT INTO test_runs (id, workspace_id, command, source, started_at, exit_code) "
        "VALUES ('r1', 1, 'make test', 'wrapper', 2, 0)"
    )
    conn.execute("INSERT INTO episode_test_runs VALUES ('e1', 'r1')")
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()

    with Store.open(db) as store:
        assert schema.schema_version(store.conn) == schema.SCHEMA_VERSION
        (episode,) = load_episodes(store)
    (old_run,) = episode["test_runs"]
    assert (old_run["id"], old_run["link"], old_run["status"]) == ("r1", "open", "passing")
    assert old_run["runner"] is None and old_run["results_from"] is None
    assert episode["tests"]["first_run_after"]["id"] == "r1"


def test_a_queued_wrapper_run_is_recorded_once_with_its_summary(
    setup: tuple[Store, Config, Path],
) -> None:
    import json

    from capture.testruns.sources.handoff import encode_run
    from capture.testruns.sources.wrapper import apply_queued_run

    store, config, ws = setup
    raw = encode_run(
        argv=["pytest", "-q", "tests/test_a.py"],
        name="unit",
        cwd=str(ws),
        workspace=str(ws),
        started_at=1000.0,
        duration_s=2.5,
        exit_code=1,
        output=b"FAILED tests/test_a.py::test_x - assert 0\n=== 1 failed, 3 passed in 2.4s ===\n",
    )
    first = apply_queued_run(store, config, raw)
    assert apply_queued_run(store, config, raw) == first  # applied twice (a crash between)
    (row,) = store.conn.execute("SELECT * FROM test_runs").fetchall()
    assert (row["command"], row["name"], row["exit_code"]) == (
        "pytest -q tests/test_a.py",
        "unit",
        1,
    )
    assert (row["passed"], row["failed"], row["results_from"]) == (3, 1, "summary")
    assert row["started_at"] == 1000.0 and row["duration_s"] == 2.5

    for bad in (b"[]", b'{"argv": []}', json.dumps({**json.loads(raw), "exit_code": "1"}).encode()):
        with pytest.raises(ValueError):
            apply_queued_run(store, config, bad)
    assert store.conn.execute("SELECT count(*) FROM test_runs").fetchone()[0] == 1
