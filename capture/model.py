"""Plain data the core decides over and the store persists."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["CaseResult", "HunkInput", "Outcome", "ProposalInput", "State", "TestRunInput"]


class State(StrEnum):
    SHOWN = "shown"
    APPLIED = "applied"
    REJECTED = "rejected"
    FAILED = "failed"  # the tool call failed: nothing was written, nobody refused it


class Outcome(StrEnum):
    KEPT = "kept"
    EDITED = "edited"
    UNDONE = "undone"
    REJECTED = "rejected"
    FAILED = "failed"
    LOST = "lost"
    PENDING = "pending"


@dataclass(slots=True)
class HunkInput:
    """One hunk as an agent proposed it. `start` is its code-point offset in the file after the
    edit when the source knows it; otherwise the hunk is located by content."""

    old_text: str
    new_text: str
    start: int | None = None
    line: int | None = None  # 1-based line of the hunk's first new line, when known


@dataclass(slots=True)
class ProposalInput:
    """An agent edit operation on one file, as received from a hook, an editor or the CLI."""

    path: str  # absolute
    workspace: str  # absolute root
    agent: str
    hunks: list[HunkInput]
    state: State = State.APPLIED
    model: str | None = None
    session_id: str | None = None
    turn_id: str | None = None
    prompt: str | None = None
    tool: str | None = None
    tool_use_id: str | None = None
    source: str = "cli"
    file_text: str | None = None  # the file right after the edit, when the source read it
    created_file: bool = False
    backfilled: bool = False
    dedupe_key: str | None = None
    decided_by: str | None = None
    # why a proposal that was never applied ended as it did (a failed call's error kind)
    reason: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(slots=True)
class CaseResult:
    """One test's outcome in a run. `file` is the test's file relative to the workspace when
    the source knows it; `classname` is the JUnit class (a dotted module or class name)."""

    test_id: str
    outcome: str  # passed, failed, error, skipped
    file: str | None = None
    classname: str | None = None
    duration_s: float | None = None


@dataclass(slots=True)
class TestRunInput:
    __test__ = False  # not a pytest test class, whatever its name

    command: str
    source: str
    started_at: float
    workspace: str | None = None
    name: str | None = None
    cwd: str | None = None
    duration_s: float | None = None
    exit_code: int | None = None
    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    failing_ids: list[str] = field(default_factory=list)
    dedupe_key: str | None = None
    runner: str | None = None  # pytest, jest, go, cargo, surefire, ...
    results_from: str | None = None  # plugin, junit, summary (None: exit code only)
    report: str | None = None  # the JUnit file(s) the counts came from
    cases: list[CaseResult] = field(default_factory=list)
