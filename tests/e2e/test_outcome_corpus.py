"""The labelled outcome corpus (tests/support/outcome_corpus): every scenario ends with the
outcomes a person watching would name, whether the hook queue is applied at once or 2 s late."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.outcome_corpus.run import play
from tests.support.outcome_corpus.scenarios import SCENARIOS, Scenario


def test_the_corpus_is_large_and_varied() -> None:
    assert len(SCENARIOS) >= 60
    names = [s.name for s in SCENARIOS]
    assert len(set(names)) == len(names)
    for agent in ("claude-code", "cursor", "codex", "gemini", "copilot"):
        assert sum(s.name.startswith(agent) for s in SCENARIOS) >= 10, agent


@pytest.mark.parametrize("delay", [0.0, 2.0], ids=["at-once", "2s-late"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario_outcomes(scenario: Scenario, delay: float, tmp_path: Path) -> None:
    result = play(scenario, tmp_path, delay=delay)
    assert result.outcomes_right, result.explain()
    assert result.runs_right, result.explain()


def test_a_checkpoint_read_long_after_its_window_says_how_late(tmp_path: Path) -> None:
    from tests.support.outcome_corpus.agents import Turn
    from tests.support.outcome_corpus.scenarios import APP, NEW, OLD
    from tests.support.outcome_corpus.world import World

    world = World(tmp_path / "ws", tmp_path / "home")
    try:
        world.write("app.py", APP)
        world.commit_all()
        turn = Turn(world, "claude-code").prompt()
        turn.edit("app.py", OLD, NEW)
        applied = world.now
        world.advance(60 * 60)  # nobody looks for an hour
        from capture.recording.observer import observe_due

        observe_due(world.store, world.config, now=world.now)
        late = dict(
            world.store.conn.execute(
                "SELECT window, late_seconds FROM checkpoints WHERE window != 'late'"
            ).fetchall()
        )
    finally:
        world.close()
    assert late["30s"] == pytest.approx(world.now - applied - 30, abs=0.1)
    assert late["10m"] == pytest.approx(world.now - applied - 600, abs=0.1)


def test_the_report_counts_lost_proposals_by_reason(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys
    import time

    from tests.conftest import capture_env
    from tests.support.outcome_corpus.agents import Turn
    from tests.support.outcome_corpus.scenarios import APP
    from tests.support.outcome_corpus.world import World

    world = World(tmp_path / "ws", tmp_path / "home", now=time.time() - 3600)
    try:
        world.write("app.py", APP)
        world.write("notes.txt", "total = 0\n".encode("utf-16"))
        world.commit_all()
        turn = Turn(world, "cursor").prompt()
        turn.edit("app.py", "    return 0\n", "    return sum(items)\n")
        for name in ("notes.txt", "gone.txt"):
            if name == "notes.txt":
                world.path(name).write_bytes("total = 1\n".encode("utf-16"))
            turn._send(
                {
                    "hook_event_name": "afterFileEdit",
                    "file_path": str(world.path(name)),
                    "edits": [{"old_string": "total = 0", "new_string": "total = 1"}],
                }
            )
        turn.stop()
        world.finish()
    finally:
        world.close()
    result = subprocess.run(
        [sys.executable, "-m", "capture", "report", "--json", "--all", "--since", "2d"],
        capture_output=True,
        text=True,
        env=capture_env(tmp_path / "home"),
        check=True,
    )
    total = json.loads(result.stdout)["total"]
    assert total["lost_by_reason"] == {"binary": 1, "deleted": 1}
    text = subprocess.run(
        [sys.executable, "-m", "capture", "report", "--all", "--since", "2d"],
        capture_output=True,
        text=True,
        env={**capture_env(tmp_path / "home"), "COLUMNS": "100"},
        check=True,
    ).stdout
    assert "Lost, by reason" in text and "binary" in text
