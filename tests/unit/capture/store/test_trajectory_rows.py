"""The trajectory's rows: a text is stored once however often it recurs, compressed when that
pays; a step is recorded once by its key; past the turn's cap a text is cut and says so; the
retention of the events log prunes old steps and the texts nothing refers to."""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.hooks.agents.trajectory import Step
from capture.importers import trajectory as importer
from capture.importers.records import History, Turn
from capture.store.database import Store
from capture.store.trajectory_rows import StepRow


def _read(key: str, at: float, text: str) -> StepRow:
    return StepRow(key=key, at=at, kind="tool", text=text, tool="Read", input='{"file_path": "a"}')


def test_a_text_read_many_times_is_stored_once(tmp_path: Path) -> None:
    body = "def f():\n    return 1\n" * 200
    with Store.open(tmp_path / "c.db") as store:
        assert store.add_steps([_read(f"s:{i}", float(i), body) for i in range(5)], now=1.0) == 5
        assert store.add_steps([_read("s:0", 0.0, body)], now=2.0) == 0
        steps, texts, written, stored = store.trajectory_space()
        assert (steps, texts) == (5, 2)  # the body and the input
        assert stored < written / 5  # compressed
        assert [s.text for s in store.steps_of_session("missing")] == []
        assert store.text_of(store.put_texts([body], now=3.0)[0]) == body


def test_old_steps_go_with_the_events_log_and_their_texts_with_them(tmp_path: Path) -> None:
    with Store.open(tmp_path / "c.db") as store:
        store.add_steps([_read("old", 10.0, "old text " * 50), _read("new", 100.0, "new")], now=1)
        assert store.prune_steps(50.0) == 1
        steps, texts, _, _ = store.trajectory_space()
        assert steps == 1
        left = store.conn.execute("SELECT count(*) FROM texts WHERE size > 100").fetchone()[0]
        assert left == 0 and texts == 2  # "new" and the shared input


def test_past_the_turn_cap_a_text_is_cut_and_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    history = History("claude-code")
    history.session_id = "s"
    turn = Turn("t1", "do it", 0.0, None)
    big = "x" * 100
    history.steps = [
        (Step("tool", float(i), f"k{i}", text=big, tool="Read"), turn) for i in range(3)
    ]
    monkeypatch.setattr(importer, "TURN_CAP_CHARS", 250)
    rows = importer.step_rows(history, {"t1": "e1"})
    assert [r.truncated for r in rows] == [False, False, True]
    assert rows[2].text is not None and rows[2].text.endswith("cut here, 50 more characters]")
    assert {r.episode_id for r in rows} == {"e1"}
