"""What one hook payload says, in the agent-neutral words the hook shell records.

Each agent module turns a payload (a JSON object) into a `Reading`: who is calling (`Call`) and a
list of facts. Facts are plain data; reading a file, choosing the workspace and writing to the
store are the shell's business (`capture.hooks.ingest`).
"""

from __future__ import annotations

from enum import StrEnum

from capture.model import HunkInput

__all__ = [
    "Call",
    "Command",
    "Edit",
    "Fact",
    "Prompt",
    "Reading",
    "Resolved",
    "SessionStart",
    "Stage",
    "TurnEnd",
]


class Stage(StrEnum):
    """How far an edit got when the payload was sent."""

    APPLIED = "applied"  # the agent wrote the file (PostToolUse, afterFileEdit, ...)
    PROPOSED = "proposed"  # about to run; may yet be denied (PreToolUse)
    FAILED = "failed"  # the tool call failed or was denied: nothing was written


class _Plain:
    """Slotted plain data. Not a dataclass: `capture hook` defines these on every agent tool call
    and a dataclass costs a code generation at import."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__
        )

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Call(_Plain):
    """The identity of one hook call: which agent, which event, which session and turn.
    `roots`: workspace roots the payload or the agent's environment names, most specific
    first."""

    __slots__ = (
        "agent",
        "event",
        "session_id",
        "turn_id",
        "model",
        "cwd",
        "roots",
        "agent_version",
    )

    def __init__(
        self,
        agent: str,
        event: str,
        session_id: str | None = None,
        turn_id: str | None = None,
        model: str | None = None,
        cwd: str | None = None,
        roots: tuple[str, ...] = (),
        agent_version: str | None = None,
    ) -> None:
        self.agent = agent
        self.event = event
        self.session_id = session_id
        self.turn_id = turn_id
        self.model = model
        self.cwd = cwd
        self.roots = roots
        self.agent_version = agent_version


class Edit(_Plain):
    """One edit operation on one file.

    path: absolute, or relative to Call.cwd. key: stable across re-sent payloads (the agent's
    tool call id and the path). written: the whole file after the edit as the agent wrote it
    (Write, write_file, create); its hunks are worked out against the text before the edit when
    that is known. original: the file before the edit, when the payload carries it. vague: the
    hunks are only a guess (no old text known); better ones may be on record already.
    denied: the agent refused to run the call (a permission denial); `error` holds its words.
    """

    __slots__ = (
        "path",
        "hunks",
        "stage",
        "key",
        "tool",
        "tool_use_id",
        "created_file",
        "written",
        "original",
        "vague",
        "error",
        "denied",
    )

    def __init__(
        self,
        path: str,
        hunks: list[HunkInput],
        stage: Stage,
        key: str,
        tool: str | None = None,
        tool_use_id: str | None = None,
        created_file: bool = False,
        written: str | None = None,
        original: str | None = None,
        vague: bool = False,
        error: str | None = None,
        denied: bool = False,
    ) -> None:
        self.path = path
        self.hunks = hunks
        self.stage = stage
        self.key = key
        self.tool = tool
        self.tool_use_id = tool_use_id
        self.created_file = created_file
        self.written = written
        self.original = original
        self.vague = vague
        self.error = error
        self.denied = denied


class Command(_Plain):
    """A shell command the agent ran to completion (or that failed to start or timed out).
    failure: why the run did not finish ("timeout", "interrupted", ...). announced: a
    pre-tool-use report, the command about to start (its key is the one its post-tool-use
    report will carry); it says when the command began, for an agent that reports no duration."""

    __slots__ = (
        "command",
        "key",
        "output",
        "exit_code",
        "duration_s",
        "cwd",
        "failure",
        "announced",
    )

    def __init__(
        self,
        command: str,
        key: str,
        output: str = "",
        exit_code: int | None = None,
        duration_s: float | None = None,
        cwd: str | None = None,
        failure: str | None = None,
        announced: bool = False,
    ) -> None:
        self.command = command
        self.key = key
        self.output = output
        self.exit_code = exit_code
        self.duration_s = duration_s
        self.cwd = cwd
        self.failure = failure
        self.announced = announced


class Prompt(_Plain):
    """A user prompt: a new turn begins."""

    __slots__ = ("text",)

    def __init__(self, text: str | None) -> None:
        self.text = text


class TurnEnd(_Plain):
    """The agent finished a turn (Stop, stop, AfterAgent, notify), or the whole session."""

    __slots__ = ("session", "reason")

    def __init__(self, session: bool = False, reason: str | None = None) -> None:
        self.session = session
        self.reason = reason


class SessionStart(_Plain):
    __slots__ = ("source",)

    def __init__(self, source: str | None = None) -> None:
        self.source = source


class Resolved(_Plain):
    """A tool call finished without an edit record of its own (its pending record is settled)."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key


Fact = Edit | Command | Prompt | TurnEnd | SessionStart | Resolved


class Reading(_Plain):
    """What one payload says. problems: what could not be used, one line each (logged; the
    payload is still kept as an event). What the agent is answered, when its protocol asks
    for an answer, is not the reader's: `capture.hooks.payloads.reply_for` says it."""

    __slots__ = ("call", "facts", "problems")

    def __init__(self, call: Call) -> None:
        self.call = call
        self.facts: list[Fact] = []
        self.problems: list[str] = []
