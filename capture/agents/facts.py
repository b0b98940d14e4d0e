"""What one hook payload says, in the agent-neutral words the hook shell records.

Each agent module turns a payload (a JSON object) into a `Reading`: who is calling (`Call`) and a
list of facts. Facts are plain data; reading a file, choosing the workspace and writing to the
store are the shell's business (`capture.hook_ingest`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass(frozen=True, slots=True)
class Call:
    """The identity of one hook call: which agent, which event, which session and turn."""

    agent: str
    event: str
    session_id: str | None = None
    turn_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    #: workspace roots the payload names (Cursor's workspace_roots), most specific first
    roots: tuple[str, ...] = ()
    agent_version: str | None = None


@dataclass(slots=True)
class Edit:
    """One edit operation on one file."""

    path: str  # absolute, or relative to Call.cwd
    hunks: list[HunkInput]
    stage: Stage
    key: str  # stable across re-sent payloads: the agent's tool call id and the path
    tool: str | None = None
    tool_use_id: str | None = None
    created_file: bool = False
    #: the whole file after the edit as the agent wrote it (Write, write_file, create); its
    #: hunks are worked out against the text before the edit when that is known
    written: str | None = None
    #: the file before the edit, when the payload carries it (originalFile, originalContent)
    original: str | None = None
    #: the hunks are only a guess (no old text known): better ones may be on record already
    vague: bool = False
    error: str | None = None


@dataclass(slots=True)
class Command:
    """A shell command the agent ran to completion (or that failed to start or timed out)."""

    command: str
    key: str
    output: str = ""
    exit_code: int | None = None
    duration_s: float | None = None
    cwd: str | None = None
    failure: str | None = None  # why the run did not finish: "timeout", "interrupted", ...


@dataclass(slots=True)
class Prompt:
    """A user prompt: a new turn begins."""

    text: str | None


@dataclass(slots=True)
class TurnEnd:
    """The agent finished a turn (Stop, stop, AfterAgent, notify), or the whole session."""

    session: bool = False
    reason: str | None = None


@dataclass(slots=True)
class SessionStart:
    source: str | None = None


@dataclass(slots=True)
class Resolved:
    """A tool call finished without an edit record of its own (its pending record is settled)."""

    key: str


Fact = Edit | Command | Prompt | TurnEnd | SessionStart | Resolved


@dataclass(slots=True)
class Reading:
    call: Call
    facts: list[Fact] = field(default_factory=list)
    #: what could not be used, one line each (logged; the payload is still kept as an event)
    problems: list[str] = field(default_factory=list)
    #: what to print on stdout, when the agent's protocol asks for an answer
    reply: str | None = None
