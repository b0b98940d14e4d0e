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
