"""Playing one scenario of the corpus and comparing what was recorded with its labels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.outcome_corpus.scenarios import Label, Scenario
from tests.support.outcome_corpus.world import World


@dataclass(frozen=True)
class Result:
    scenario: Scenario
    delay: float
    outcomes: list[tuple[str, str, str]]
    runs: list[tuple[int, str]]

    def _matches(self, got: tuple[str, str, str], want: tuple[str, Label]) -> bool:
        labels = {want[1]} if isinstance(want[1], str) else want[1]
        return got[0] == want[0] and got[1] in labels

    @property
    def right_outcomes(self) -> int:
        """Proposals labelled as the scenario says (a missing or extra proposal is wrong)."""
        return sum(
            self._matches(g, w) for g, w in zip(self.outcomes, self.scenario.outcomes, strict=False)
        )

    @property
    def outcomes_right(self) -> bool:
        return len(self.outcomes) == len(self.scenario.outcomes) and self.right_outcomes == len(
            self.outcomes
        )

    @property
    def right_runs(self) -> int:
        return sum(g == w for g, w in zip(self.runs, self.scenario.runs, strict=False))

    @property
    def runs_right(self) -> bool:
        return list(self.runs) == list(self.scenario.runs)

    def explain(self) -> str:
        return (
            f"{self.scenario.name} (apply delayed {self.delay:g} s)\n"
            f"  expected outcomes {list(self.scenario.outcomes)}\n"
            f"  recorded          {self.outcomes}\n"
            f"  expected runs     {list(self.scenario.runs)}\n"
            f"  recorded          {self.runs}"
        )


def play(scenario: Scenario, tmp: Path, *, delay: float) -> Result:
    world = World(tmp / "ws", tmp / "home", delay=delay)
    try:
        for relative, text in scenario.files.items():
            world.write(relative, text)
        world.commit_all()
        scenario.play(world)
        world.finish()
        return Result(scenario, delay, world.outcomes(), world.runs())
    finally:
        world.close()
