"""What an agent's history says, read from its transcript: the edits and test commands of each
turn, with the time they happened. Plain data; the readers are pure functions over the lines."""

from __future__ import annotations

from datetime import datetime

from capture.hooks.agents.facts import Command, Edit

__all__ = ["History", "PastEdit", "PastRun", "Turn", "timestamp"]


class Turn:
    __slots__ = ("turn_id", "prompt", "at", "model")

    def __init__(self, turn_id: str, prompt: str | None, at: float, model: str | None) -> None:
        self.turn_id = turn_id
        self.prompt = prompt
        self.at = at
        self.model = model


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

    __slots__ = ("agent", "session_id", "cwd", "turns", "edits", "runs", "bad_lines")

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.turns: list[Turn] = []
        self.edits: list[PastEdit] = []
        self.runs: list[PastRun] = []
        self.bad_lines = 0


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
