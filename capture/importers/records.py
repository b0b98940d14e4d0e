"""What an agent's history says, read from its transcript: the edits and test commands of each
turn, with the time they happened. Plain data; the readers are pure functions over the lines."""

from __future__ import annotations

from datetime import datetime

from capture.hooks.agents.facts import Command, Edit
from capture.hooks.agents.trajectory import Step, task_of

__all__ = ["History", "PastEdit", "PastRun", "Step", "Turn", "timestamp"]


class Turn:
    __slots__ = ("turn_id", "prompt", "at", "model", "task", "task_source")

    def __init__(self, turn_id: str, prompt: str | None, at: float, model: str | None) -> None:
        self.turn_id = turn_id
        self.prompt = prompt
        self.at = at
        self.model = model
        # the request the turn's work answers and where it came from (`trajectory.task_of`)
        self.task: str | None = None
        self.task_source: str | None = None


class PastEdit:
    """An edit as the transcript tells it. `after`: the whole file right after the edit, when
    the transcript lets it be worked out; or `contexts`: the lines around each hunk as a diff
    shows them (None where it does not). Either finds the hunks again in a later text."""

    __slots__ = ("edit", "at", "turn", "cwd", "after", "contexts")

    def __init__(
        self,
        edit: Edit,
        at: float,
        turn: Turn | None,
        cwd: str | None,
        after: str | None,
        contexts: list[tuple[str | None, str | None]] | None = None,
    ) -> None:
        self.edit = edit
        self.at = at
        self.turn = turn
        self.cwd = cwd
        self.after = after
        self.contexts = contexts


class PastRun:
    __slots__ = ("command", "at", "turn", "cwd")

    def __init__(self, command: Command, at: float, turn: Turn | None, cwd: str | None) -> None:
        self.command = command
        self.at = at
        self.turn = turn
        self.cwd = cwd


class History:
    """One transcript: a session of one agent."""

    __slots__ = ("agent", "session_id", "cwd", "turns", "edits", "runs", "bad_lines", "steps")

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.turns: list[Turn] = []
        self.edits: list[PastEdit] = []
        self.runs: list[PastRun] = []
        self.bad_lines = 0
        # the trajectory: every step in order, with the turn it belongs to
        self.steps: list[tuple[Step, Turn | None]] = []

    def settle_tasks(self) -> None:
        """Name each turn's task from the steps before it and its own."""
        earlier: list[Step] = []
        index = 0
        for turn in self.turns:
            while index < len(self.steps) and self.steps[index][1] is not turn:
                earlier.append(self.steps[index][0])
                index += 1
            own = [step for step, of in self.steps if of is turn]
            if turn.prompt and not any(s.kind == "user" and not s.harness for s in own):
                # the prompt is known (a rollout's event) though no message of it was kept
                own.insert(0, Step("user", turn.at, "", text=turn.prompt))
            turn.task, turn.task_source = task_of(earlier, own)


def timestamp(value: object, default: float) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp ("2026-08-21T09:14:06.540Z")."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) / (1000 if value > 1e11 else 1)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return default
    return default
