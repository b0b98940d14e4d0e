"""The labelled outcome corpus (tests/corpus): every scenario ends with the outcomes a person
watching would name, whether the hook queue is applied at once or 2 s late."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus.run import play
from tests.corpus.scenarios import SCENARIOS, Scenario


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
    from tests.corpus.agents import Turn
    from tests.corpus.scenarios import APP, NEW, OLD
    from tests.corpus.world import World

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
