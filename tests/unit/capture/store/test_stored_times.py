"""Fuzz over the time fields: whatever time a source hands in or a store holds, the reading
paths answer, leave out only the row whose own time cannot be shown, and doctor names it."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from capture.config import Config
from capture.edits.windows import parse_windows
from capture.importers.prepare import Prepared, PreparedEdit, PreparedRun
from capture.importers.records import History
from capture.importers.write import ImportStats, write
from capture.model import HunkInput, ProposalInput, State, TestRunInput
from capture.moments import EARLIEST, believable, checked, checked_duration
from capture.paths import Paths
from capture.recording.recorder import record_proposal, record_test_run
from capture.store.database import Store
from capture.store.episodes import iso, load_episodes
from capture.store.time_rows import TIME_COLUMNS, unreadable_times

NOW = 1_796_000_000.0  # 2026-12
TIMES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e13, max_value=1e13),
    st.sampled_from([0.0, -1.0, EARLIEST, 253_402_387_139.0, 7_258_118_400.0, NOW + 86_401]),
)


@given(TIMES)
def test_checked_keeps_a_believable_time_and_replaces_any_other(ts: float) -> None:
    out = checked(ts, wall=NOW, what="t")
    assert out == ts if (math.isfinite(ts) and EARLIEST <= ts <= NOW + 86_400) else out == NOW
    assert believable(out, wall=NOW)
    # a stored time is formatted when a datetime can hold it, else left empty, never an error
    assert iso(ts) is None or (math.isfinite(ts) and abs(ts) < 3e11)


@given(st.one_of(st.none(), TIMES))
def test_checked_duration_is_none_or_a_week_at_most(seconds: float | None) -> None:
    out = checked_duration(seconds, what="d")
    assert out is None or 0 <= out <= 7 * 86_400


def small_store(tmp_path: Path) -> tuple[Store, Config, Path]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    paths = Paths(tmp_path / "data", tmp_path / "config", tmp_path / "state")
    config = Config(paths=paths, windows=parse_windows("1m"))
    store = Store.open(paths.db)
    (ws / "a.py").write_text("x = 1\n")
    proposal = ProposalInput(
        path=str(ws / "a.py"),
        workspace=str(ws),
        agent="claude-code",
        hunks=[HunkInput("x = 0\n", "x = 1\n")],
        session_id="s",
        turn_id="t",
    )
    record_proposal(store, config, proposal, now=NOW)
    for name in ("first", "second"):
        run = TestRunInput(
            command="pytest", source="wrapper", started_at=NOW + 5, workspace=str(ws)
        )
        run.name = name
        record_test_run(store, run, now=NOW + 10)
    return store, config, ws


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    column=st.sampled_from([(t, c) for t, (_, *cs) in TIME_COLUMNS.items() for c in cs]),
    value=TIMES,
)
def test_a_stored_time_takes_only_its_own_row_down(column: tuple[str, str], value: float) -> None:
    import tempfile

    assume(not math.isnan(value))  # SQLite stores NaN as NULL: a missing time, not a bad one
    with tempfile.TemporaryDirectory() as tmp:
        store, _, _ = small_store(Path(tmp))
        table, name = column
        with store.conn:
            # one row of the table gets the value (the first test run, or the only row)
            key = store.conn.execute(f"SELECT min(rowid) FROM {table}").fetchone()[0]
            if key is None:
                return  # nothing written there by this history (tier_history)
            store.conn.execute(f"UPDATE {table} SET {name} = ? WHERE rowid = ?", (value, key))
        episodes = load_episodes(store)  # never raises
        bad = unreadable_times(store.conn)
        shown = math.isfinite(value) and 0 <= value < 7_258_118_400.0
        assert (bad == []) == shown, bad
        if not shown:
            assert [(b["table"], b["column"]) for b in bad] == [column]
        if (table, name) == ("episodes", "started_at") and not shown:
            assert episodes == []  # the episode's own time: the episode goes, alone
        else:
            (episode,) = episodes
            runs = [r["name"] for r in episode["test_runs"]]
            if (table, name) == ("test_runs", "started_at") and not shown:
                assert runs == ["second"]  # the run goes, its episode stays
            else:
                assert sorted(runs) == ["first", "second"]
            if (table, name) == ("proposals", "created_at") and not shown:
                assert episode["proposals"] == []
            else:
                assert len(episode["proposals"]) == 1
        store.close()


@settings(max_examples=40, deadline=None)
@given(edit_at=TIMES, run_at=TIMES, duration=st.one_of(st.none(), TIMES))
def test_an_import_stores_only_believable_times(
    edit_at: float, run_at: float, duration: float | None
) -> None:
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as tmp:
        store, config, ws = small_store(Path(tmp))
        (ws / "b.py").write_text("y = 2\n")
        from capture.edits.hunks import locate

        proposal = ProposalInput(
            path=str(ws / "b.py"),
            workspace=str(ws),
            agent="codex",
            hunks=[HunkInput("y = 1\n", "y = 2\n")],
            state=State.APPLIED,
            session_id="imported",
            turn_id="t1",
            dedupe_key="k1",
        )
        run = TestRunInput(
            command="pytest",
            source="import",
            started_at=run_at,
            workspace=str(ws),
            duration_s=duration,
            dedupe_key="r1",
        )
        prepared = Prepared(History("codex"))
        prepared.edits.append(
            PreparedEdit(proposal, locate("y = 2\n", proposal.hunks), "b.py", edit_at, None)
        )
        prepared.runs.append(PreparedRun(run, None))
        wall = time.time()
        write(store, config, prepared, now=NOW, stats=ImportStats())
        assert unreadable_times(store.conn) == []
        for (at,) in store.conn.execute("SELECT started_at FROM test_runs"):
            assert believable(at, wall=wall + 60)
        for (at,) in store.conn.execute("SELECT created_at FROM proposals"):
            assert believable(at, wall=wall + 60)
        assert len(load_episodes(store)) >= 1
        store.close()
