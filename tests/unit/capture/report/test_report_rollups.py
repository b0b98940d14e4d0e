"""The rollups that `capture report` reads stay equal to the raw rows they sum, whatever writes,
and a report served by them equals one computed from the raw rows alone."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capture.connection import sqlite3
from capture.report import queries
from capture.report.assemble import make_report
from capture.report.figures import fold_tests
from capture.report.json_out import report_json
from capture.report.queries import Scope
from capture.store.database import Store
from capture.store.proposal_rollups import (
    COUNT_COLUMNS,
    DIMENSIONS,
    RETENTION_COLUMNS,
    SPANS,
    ext_sql,
)
from capture.store.run_rollups import RUN_DIMENSIONS, run_passed_sql
from capture.store.schema import SCHEMA_VERSION
from tests.support.report_fixtures import at, build_fixture, copy_into_schema_v1


def _value(dim: str) -> str:
    return {
        "agent": "p.agent",
        "model": "coalesce(p.model, '')",
        "ext": ext_sql("p.path"),
        "all": "''",
    }[dim]


def raw_counts(conn: sqlite3.Connection) -> set[tuple]:
    rows = set()
    for dim in DIMENSIONS:
        for span in SPANS:
            rows |= set(
                map(
                    tuple,
                    conn.execute(
                        f"""SELECT '{dim}', {span}, CAST(p.created_at / {span} AS INTEGER),
                    coalesce(p.workspace_id, 0), {_value(dim)}, count(*),
                    sum(p.state = 'shown'), sum(p.state = 'applied'), sum(p.state = 'rejected'),
                    sum(p.outcome = 'kept'), sum(p.outcome = 'edited'),
                    sum(p.outcome = 'undone'), sum(p.outcome = 'lost'),
                    sum(CASE WHEN p.state = 'applied' THEN p.chars_added ELSE 0 END),
                    sum(CASE WHEN p.state = 'applied' THEN p.lines_added ELSE 0 END)
                    FROM proposals p GROUP BY 1, 2, 3, 4, 5""",
                    ),
                )
            )
    return rows


def rollup_counts(conn: sqlite3.Connection) -> set[tuple]:
    return set(
        map(
            tuple,
            conn.execute(
                f"""SELECT dim, span, bucket, workspace_id, value, {", ".join(COUNT_COLUMNS)}
                FROM report_counts WHERE n != 0"""
            ),
        )
    )


def raw_retention(conn: sqlite3.Connection) -> set[tuple]:
    rows = set()
    for dim in DIMENSIONS:
        for span in SPANS:
            rows |= set(
                map(
                    tuple,
                    conn.execute(
                        f"""SELECT '{dim}', {span}, CAST(p.created_at / {span} AS INTEGER),
                    coalesce(p.workspace_id, 0), {_value(dim)}, c.window, c.window_seconds,
                    count(*), sum(c.retention IS NULL),
                    sum(CASE WHEN c.retention IS NULL THEN 0 ELSE p.chars_added END),
                    round(sum(coalesce(c.retention * p.chars_added, 0.0)), 6)
                    FROM checkpoints c JOIN proposals p ON p.id = c.proposal_id
                    WHERE c.observed_at IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6, 7""",
                    ),
                )
            )
    return rows


def rollup_retention(conn: sqlite3.Connection) -> set[tuple]:
    cols = ", ".join(RETENTION_COLUMNS[:-1])
    return set(
        map(
            tuple,
            conn.execute(
                f"""SELECT dim, span, bucket, workspace_id, value, window, window_seconds,
                {cols}, round(survived_chars, 6) FROM report_retention WHERE observed != 0"""
            ),
        )
    )


def raw_tests(conn: sqlite3.Connection) -> set[tuple]:
    passed = run_passed_sql("t")
    value = {"agent": "e.agent", "model": "coalesce(e.model, '')", "all": "''"}
    rows = set()
    for dim in RUN_DIMENSIONS:
        for span in SPANS:
            rows |= set(
                map(
                    tuple,
                    conn.execute(
                        f"""SELECT '{dim}', {span}, CAST(started_at / {span} AS INTEGER), ws, v,
                        count(*), count(r), coalesce(sum(r), 0) FROM (
                            SELECT DISTINCT t.id, t.started_at, coalesce(t.workspace_id, 0) AS ws,
                            {value[dim]} AS v, {passed} AS r
                            FROM episode_test_runs l JOIN test_runs t ON t.id = l.test_run_id
                            JOIN episodes e ON e.id = l.episode_id)
                        GROUP BY 1, 2, 3, 4, 5"""
                    ),
                )
            )
    return rows


def rollup_tests(conn: sqlite3.Connection) -> set[tuple]:
    return set(
        map(
            tuple,
            conn.execute(
                "SELECT dim, span, bucket, workspace_id, value, runs, with_result, passed "
                "FROM report_tests WHERE runs != 0"
            ),
        )
    )


def episode_rows(conn: sqlite3.Connection) -> set[tuple]:
    return set(map(tuple, conn.execute("SELECT * FROM report_episodes")))


def raw_episode_rows(conn: sqlite3.Connection) -> list[tuple]:
    """What report_episodes should hold, computed from the links."""
    rows = conn.execute(
        f"""SELECT agent, failing, repaired, first_run_at - first_edit_at
        FROM ({queries.EPISODES_RAW_SQL})""",
        {"lo": 0.0, "hi": 4e9},
    )
    return sorted((r[0], bool(r[1]), bool(r[2]), r[3]) for r in rows)


def assert_consistent(conn: sqlite3.Connection) -> None:
    assert rollup_counts(conn) == raw_counts(conn)
    assert rollup_retention(conn) == raw_retention(conn)
    assert rollup_tests(conn) == raw_tests(conn)
    stored = sorted(
        (r[3], bool(r[7]), bool(r[8]), None if r[6] is None else r[5] - r[6])
        for r in conn.execute("SELECT * FROM report_episodes")
    )
    assert stored == raw_episode_rows(conn)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(tmp_path / "home" / "data" / "capture.db")
    build_fixture(s, tmp_path)
    return s


def test_every_migration_leaves_the_report_triggers_in_place(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "fresh.db")
    found = {
        (r[0], r[1])
        for r in store.conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"
        )
    }
    assert found >= {
        ("report_proposal_insert", "proposals"),
        ("report_proposal_update", "proposals"),
        ("report_proposal_delete", "proposals"),
        ("report_proposal_moved", "proposals"),
        ("report_checkpoint_insert", "checkpoints"),
        ("report_checkpoint_update", "checkpoints"),
        ("report_checkpoint_delete", "checkpoints"),
        ("report_link_insert", "episode_test_runs"),
        ("report_link_delete", "episode_test_runs"),
        ("report_run_update", "test_runs"),
        ("report_episode_update", "episodes"),
        ("report_episode_edit_insert", "proposals"),
        ("report_episode_edit_update", "proposals"),
        ("report_episode_edit_delete", "proposals"),
    }
    store.close()


def test_triggers_follow_inserts_decisions_and_observations(store: Store) -> None:
    assert rollup_counts(store.conn)  # not trivially equal
    assert len(rollup_tests(store.conn)) > 10 and len(episode_rows(store.conn)) == 6
    assert_consistent(store.conn)


def test_triggers_follow_updates_and_deletes(store: Store) -> None:
    conn = store.conn
    with store.transaction():
        conn.execute("UPDATE proposals SET outcome = 'kept' WHERE outcome = 'undone'")
        conn.execute("UPDATE proposals SET path = 'src/moved.rs' WHERE path = 'src/util.py'")
        conn.execute("UPDATE proposals SET model = NULL, created_at = created_at + 86400")
        conn.execute("UPDATE checkpoints SET retention = 0.25 WHERE window = '2m'")
        conn.execute("UPDATE checkpoints SET observed_at = NULL WHERE window = 'late'")
        conn.execute("UPDATE test_runs SET exit_code = 0, failed = 0 WHERE command = 'cargo test'")
        conn.execute("UPDATE test_runs SET started_at = started_at + 3600 WHERE exit_code = 1")
        conn.execute("UPDATE episodes SET model = 'opus-2' WHERE model = 'opus'")
        conn.execute(
            "UPDATE episodes SET agent = 'codex' WHERE agent = 'claude-code' AND turn_id = 't3'"
        )
        conn.execute(
            "UPDATE proposals SET applied_at = applied_at - 30 WHERE applied_at IS NOT NULL"
        )
        # One run following two episodes of different agents, then one of them re-linked.
        run = conn.execute("SELECT id FROM test_runs WHERE command = 'npm test'").fetchone()[0]
        other = conn.execute(
            "SELECT id FROM episodes WHERE agent = 'codex' AND model = 'gpt-5' ORDER BY id LIMIT 1"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO episode_test_runs (episode_id, test_run_id) VALUES (?, ?)", (other, run)
        )
    assert_consistent(conn)
    with store.transaction():
        conn.execute(
            "DELETE FROM episode_test_runs WHERE test_run_id = ? AND episode_id != ?", (run, other)
        )
    assert_consistent(conn)
    with store.transaction():
        conn.execute("DELETE FROM checkpoints WHERE window = '30s'")
        victim = conn.execute("SELECT id FROM proposals ORDER BY id LIMIT 1").fetchone()[0]
        for table in ("checkpoints", "hunks"):
            conn.execute(f"DELETE FROM {table} WHERE proposal_id = ?", (victim,))
        conn.execute("DELETE FROM proposals WHERE id = ?", (victim,))
    assert_consistent(conn)


def test_rows_inserted_with_the_rollups_deferred_are_added_at_the_catch_up(
    store: Store, tmp_path: Path
) -> None:
    """A bulk writer drops the insert triggers in its transaction and adds its rows at once
    before committing: the rollups then hold old and new rows, and the triggers are back."""
    from capture.edits.hunks import LocatedHunk
    from capture.edits.windows import DEFAULT_LATE, parse_windows
    from capture.model import HunkInput, Outcome, ProposalInput, State
    from capture.store.proposal_rows import Observed, Settled

    conn = store.conn
    before = set(map(tuple, conn.execute("SELECT name, sql FROM sqlite_master")))
    counts = conn.execute("SELECT count(*) FROM report_counts").fetchone()[0]
    with store.transaction():
        deferred = store.defer_rollups()
        for i, (path, model, state, turn, when) in enumerate(
            [
                # into rollup rows that exist, and before the first edit of episode E1
                ("src/app.py", "opus", State.APPLIED, "t1", at("2026-03-01 12:05")),
                ("src/new.go", None, State.APPLIED, "b1", at("2026-03-01 13:10")),
                ("README.md", "opus", State.REJECTED, "b2", at("2026-03-01 14:10")),
            ]
        ):
            seen = Observed(0.5 * i, 0.5 * i or None, Outcome.EDITED, "import")
            new = "x = 1\n" * (i + 1)
            store.add_proposal(
                ProposalInput(
                    path=str(tmp_path / "a" / path),
                    workspace=str(tmp_path / "a"),
                    agent="claude-code",
                    hunks=[HunkInput("", new)],
                    state=state,
                    model=model,
                    session_id="s1",
                    turn_id=turn,
                ),
                [LocatedHunk("", new, None)],
                relative_path=path,
                now=when,
                windows=parse_windows("30s,2m,10m"),
                late=DEFAULT_LATE,
                gap=600,
                settled=Settled(when + 1, Outcome.EDITED, "bulk", seen, seen),
            )
        assert not conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'report_proposal_insert'"
        ).fetchone()
        store.catch_up_rollups(deferred)
    assert set(map(tuple, conn.execute("SELECT name, sql FROM sqlite_master"))) == before
    assert conn.execute("SELECT count(*) FROM report_counts").fetchone()[0] < counts + 3 * 8
    assert (
        conn.execute("SELECT count(*) FROM checkpoints WHERE observed_at IS NOT NULL").fetchone()[0]
        > 8
    )
    assert_consistent(conn)


def test_backfill_of_a_database_left_by_release_1(tmp_path: Path) -> None:
    """Rows written before the rollups existed are summed in when the database is upgraded."""
    modern = Store.open(tmp_path / "modern.db")
    build_fixture(modern, tmp_path)
    modern.close()
    db = tmp_path / "old.db"
    copy_into_schema_v1(tmp_path / "modern.db", db)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'report_counts'").fetchone()
    assert conn.execute("SELECT count(*) FROM proposals").fetchone()[0] == 14  # Q0-Q3, P1-P10
    conn.close()
    store = Store.open(db)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert len(rollup_counts(store.conn)) > 20
    assert_consistent(store.conn)


def _json(store: Store, scope: Scope, by: str | None) -> dict:
    return report_json(make_report(store.conn, scope, by, workspace=None))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.floats(min_value=0, max_value=12 * 86400),
    length=st.floats(min_value=60, max_value=9 * 86400),
    by=st.sampled_from([None, "agent", "model", "language", "workspace", "day", "week"]),
    offset=st.sampled_from([0, 19800, -12600, 3600]),
)
def test_rollups_give_the_same_report_as_raw_rows(
    store: Store, start: float, length: float, by: str | None, offset: int
) -> None:
    since = at("2026-02-22 00:00") + start
    scope = Scope(since, since + length, None, offset)
    served = _json(store, scope, by)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(queries, "SPANS", ())  # every period edge to edge from the raw rows
        raw = _json(store, scope, by)
    assert served == raw


def test_episode_rows_follow_links_in_any_order(tmp_path: Path) -> None:
    """Repairs are found whichever of the failing and the passing run is linked first."""
    store = Store.open(tmp_path / "c.db")
    conn = store.conn
    with store.transaction():
        conn.execute("INSERT INTO workspaces (id, root, created_at) VALUES (1, '/w', 0)")
        for e in ("e1", "e2", "e3"):
            conn.execute(
                "INSERT INTO episodes (id, workspace_id, agent, model, started_at, last_at) "
                "VALUES (?, 1, 'a', NULL, 100, 100)",
                (e,),
            )
            conn.execute(
                "INSERT INTO proposals (id, episode_id, workspace_id, path, agent, state, "
                "created_at, applied_at) VALUES (?, ?, 1, 'x.py', 'a', 'applied', 100, 110)",
                ("p" + e, e),
            )
        runs = [
            ("r1", "pytest", 200, 1),  # fails
            ("r2", "pytest", 300, 0),  # then passes: a repair
            ("r3", "lint", 150, 1),  # fails, never passes
            ("r4", "pytest", 250, None),  # no result
        ]
        for run_id, command, started, exit_code in runs:
            conn.execute(
                "INSERT INTO test_runs (id, workspace_id, command, source, started_at, "
                "exit_code) VALUES (?, 1, ?, 'wrapper', ?, ?)",
                (run_id, command, started, exit_code),
            )
    links = {"e1": ["r2", "r4", "r1"], "e2": ["r1", "r3"], "e3": ["r4"]}
    for episode, run_ids in links.items():
        for run_id in run_ids:  # one transaction per link: each folds into the row alone
            with store.transaction():
                conn.execute(
                    "INSERT INTO episode_test_runs (episode_id, test_run_id) VALUES (?, ?)",
                    (episode, run_id),
                )
    rows = {
        r[0]: (r[5], r[6], r[7], r[8])
        for r in conn.execute("SELECT * FROM report_episodes ORDER BY episode_id")
    }
    assert rows == {
        "e1": (200.0, 110.0, 1, 1),
        "e2": (150.0, 110.0, 1, 0),
        "e3": (250.0, 110.0, 0, 0),
    }
    assert_consistent(conn)
    with store.transaction():
        conn.execute("UPDATE test_runs SET exit_code = 0 WHERE id = 'r1'")  # no failure left
    row = conn.execute("SELECT failing, repaired FROM report_episodes WHERE episode_id = 'e1'")
    assert tuple(row.fetchone()) == (0, 0)
    assert_consistent(conn)
    with store.transaction():
        conn.execute("UPDATE proposals SET applied_at = 105 WHERE id = 'pe1'")
    row = conn.execute("SELECT first_edit_at FROM report_episodes WHERE episode_id = 'e1'")
    assert tuple(row.fetchone()) == (105.0,)
    store.close()


def reference_percentile(values: list[float], q: float) -> float:
    """The definitions: the median is the mean of the two middle values for an even count;
    other percentiles are nearest-rank."""
    ordered = sorted(values)
    n = len(ordered)
    if q == 0.5:
        return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return ordered[max(math.ceil(q * n), 1) - 1]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]),
            st.floats(-50, 5000, allow_nan=False),
            st.booleans(),
        ),
        max_size=40,
    )
)
def test_first_test_percentiles(episodes: list[tuple[str, float, bool]]) -> None:
    """SQL histograms of first-test times to the second, read by the pure percentile."""
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE report_episodes (episode_id TEXT, started_at REAL, workspace_id INTEGER, "
        "agent TEXT, model TEXT, first_run_at REAL, first_edit_at REAL, failing INTEGER, "
        "repaired INTEGER)"
    )
    conn.executemany(
        "INSERT INTO report_episodes VALUES (?, 100, 1, ?, '', ?, 1000.0, ?, 0)",
        [
            (f"e{i}", agent, 1000.0 + delay if timed else None, int(delay < 100))
            for i, (agent, delay, timed) in enumerate(episodes)
        ],
    )
    rows = queries._fetch_episode_tests(conn, Scope(50.0, 200.0, None, 0), "agent")
    folded = fold_tests([], rows, str)
    assert folded is not None
    for agent in ("a", "b"):
        mine = [(d, t) for a, d, t in episodes if a == agent]
        if not mine:
            assert (agent, True) not in folded
            continue
        stored = [((1000.0 + d) - 1000.0, t) for d, t in mine]  # what the table holds
        delays = [float(math.floor(d + 0.5)) for d, t in stored if t and d >= 0]  # SQL round()
        got = folded[(agent, True)]
        assert got.episodes == len(mine)
        assert got.failing == sum(1 for d, _ in mine if d < 100)
        assert got.timed == len(delays)
        assert got.first_test_median == (reference_percentile(delays, 0.5) if delays else None)
        assert got.first_test_p90 == (reference_percentile(delays, 0.9) if delays else None)
