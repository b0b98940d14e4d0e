"""The params of the ``capture/*`` notifications: checked, and turned into plain data.

Every field is read defensively (an editor plugin may send anything); a message that cannot be
used raises :class:`ParamsError` with one line saying why, which the server logs. docs/editors.md
("Notifications the server accepts") documents each field.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from capture.model import State
from server.surrogates import escape, has_surrogates

__all__ = [
    "DecisionParams",
    "HunkParam",
    "ParamsError",
    "ProposalParams",
    "RangeParam",
    "TestRunParams",
    "UndoParams",
    "parse_decision",
    "parse_proposal",
    "parse_test_run",
    "parse_undo",
]

MAX_TEXT = 8 * 1024 * 1024  # larger hunks are not tracked (the core's file limit)
# SQLite stores integers in 64 bits: a larger one must be refused here, not fail in the store.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# Exit codes are 32-bit on every platform (unsigned on Windows, negative signals elsewhere).
EXIT_MIN = -(2**31)
EXIT_MAX = 2**32 - 1


class ParamsError(ValueError):
    """Params that cannot be used."""


@dataclass(frozen=True, slots=True)
class RangeParam:
    start_line: int
    start_character: int
    end_line: int
    end_character: int


@dataclass(frozen=True, slots=True)
class HunkParam:
    old_text: str
    new_text: str
    range: RangeParam | None


@dataclass(frozen=True, slots=True)
class ProposalParams:
    uri: str
    editor_id: str | None
    state: State
    hunks: tuple[HunkParam, ...]
    agent: str
    model: str | None
    session_id: str | None
    turn_id: str | None
    prompt: str | None
    tool: str | None


@dataclass(frozen=True, slots=True)
class DecisionParams:
    editor_id: str | None
    proposal_id: str | None
    accepted: bool
    decided_by: str
    uri: str | None
    ranges: tuple[RangeParam | None, ...]


@dataclass(frozen=True, slots=True)
class UndoParams:
    uri: str
    version: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class TestRunParams:
    command: str
    name: str | None
    cwd: str | None
    workspace: str | None
    started_at: float | None
    duration_s: float | None
    exit_code: int | None
    passed: int | None
    failed: int | None
    errors: int | None
    skipped: int | None
    failing_ids: tuple[str, ...]
    run_id: str | None


def _object(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise ParamsError("params must be an object")
    return params


def _str(obj: dict[str, Any], key: str, *, required: bool = False, limit: int = 10_000) -> Any:
    value = obj.get(key)
    if value is None:
        if required:
            raise ParamsError(f"{key} is required")
        return None
    if not isinstance(value, str):
        raise ParamsError(f"{key} must be a string")
    if len(value) > limit:
        raise ParamsError(f"{key} is longer than {limit} characters")
    # Names, ids and free text go to the store as they are: a lone surrogate must be escaped.
    return escape(value)


def _text(obj: dict[str, Any], key: str) -> str:
    """A hunk's text, kept exact (lone surrogates included): it is located in the document
    mirror, which holds them; the writer thread escapes both alike."""
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ParamsError(f"{key} must be a string")
    if len(value) > MAX_TEXT:
        raise ParamsError(f"{key} is longer than {MAX_TEXT} characters")
    return value


def _int(
    obj: dict[str, Any],
    key: str,
    *,
    minimum: int | None = 0,
    maximum: int = INT64_MAX,
) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if type(value) is not int:
        raise ParamsError(f"{key} must be an integer")
    if value < (INT64_MIN if minimum is None else minimum):
        raise ParamsError(f"{key} must be >= {INT64_MIN if minimum is None else minimum}")
    if value > maximum:
        raise ParamsError(f"{key} must be <= {maximum}")
    return value


def _path(obj: dict[str, Any], key: str) -> str | None:
    """An absolute path (or ``file:`` URI) naming a place; anything else is refused, since it
    would become a workspace row of its own."""
    value = _str(obj, key, limit=4096)
    if value is None:
        return None
    if any(ord(c) < 32 for c in value):
        raise ParamsError(f"{key} holds control characters")
    if value.startswith("file:"):
        return value
    if not os.path.isabs(value):
        raise ParamsError(f"{key} must be an absolute path or a file: URI")
    return value


def _float(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise ParamsError(f"{key} must be a non-negative number")
    return float(value)


def _position(value: Any, name: str) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise ParamsError(f"{name} must be a position {{line, character}}")
    line, character = value.get("line"), value.get("character")
    if type(line) is not int or type(character) is not int:
        raise ParamsError(f"{name}.line and {name}.character must be integers")
    # Negative positions are invalid LSP; clamp them like positions past the end.
    return max(line, 0), max(character, 0)


def _range(value: Any) -> RangeParam | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ParamsError("range must be an object {start, end}")
    start = _position(value.get("start"), "range.start")
    end = _position(value.get("end", value.get("start")), "range.end")
    return RangeParam(start[0], start[1], end[0], end[1])


def _uri(obj: dict[str, Any], *, required: bool) -> Any:
    value = obj.get("uri")
    if isinstance(value, str) and has_surrogates(value):
        # A file name cannot hold one: the OS refuses it, and an escaped URI names no file.
        raise ParamsError("uri holds a lone surrogate")
    return _str(obj, "uri", required=required, limit=4096)


def parse_proposal(params: Any) -> ProposalParams:
    obj = _object(params)
    uri = _uri(obj, required=True)
    state_name = _str(obj, "state") or "applied"
    try:
        state = State(state_name)
    except ValueError:
        raise ParamsError("state must be one of: applied, shown, rejected") from None
    edits = obj.get("edits")
    if edits is None:
        if "newText" not in obj:
            raise ParamsError("give newText (one hunk) or edits (several)")
        edits = [obj]
    if not isinstance(edits, list) or not edits:
        raise ParamsError("edits must be a non-empty list")
    if len(edits) > 1000:
        raise ParamsError("more than 1000 edits in one proposal")
    hunks = []
    for edit in edits:
        if not isinstance(edit, dict) or not isinstance(edit.get("newText"), str):
            raise ParamsError("each edit needs a newText string")
        hunks.append(
            HunkParam(_text(edit, "oldText"), _text(edit, "newText"), _range(edit.get("range")))
        )
    if all(not h.old_text and not h.new_text for h in hunks):
        raise ParamsError("the edits change nothing")
    return ProposalParams(
        uri=uri,
        editor_id=_str(obj, "id", limit=200),
        state=state,
        hunks=tuple(hunks),
        agent=_str(obj, "agent", limit=200) or "editor",
        model=_str(obj, "model", limit=200),
        session_id=_str(obj, "sessionId", limit=200),
        turn_id=_str(obj, "turnId", limit=200),
        prompt=_str(obj, "prompt", limit=1_000_000),
        tool=_str(obj, "tool", limit=200),
    )


def parse_decision(params: Any) -> DecisionParams:
    obj = _object(params)
    editor_id = _str(obj, "id", limit=200)
    proposal_id = _str(obj, "proposalId", limit=200)
    if editor_id is None and proposal_id is None:
        raise ParamsError("give id (the editor's) or proposalId (the store's)")
    accepted = obj.get("accepted")
    if not isinstance(accepted, bool):
        raise ParamsError("accepted must be true or false")
    ranges: list[RangeParam | None] = []
    edits = obj.get("edits")
    if edits is not None:
        if not isinstance(edits, list):
            raise ParamsError("edits must be a list")
        for edit in edits[:1000]:
            if not isinstance(edit, dict):
                raise ParamsError("each edit must be an object")
            ranges.append(_range(edit.get("range")))
    return DecisionParams(
        editor_id=editor_id,
        proposal_id=proposal_id,
        accepted=accepted,
        decided_by=_str(obj, "decidedBy", limit=200) or "user",
        uri=_uri(obj, required=False),
        ranges=tuple(ranges),
    )


def parse_undo(params: Any) -> UndoParams:
    obj = _object(params)
    reason = _str(obj, "reason") or "undo"
    if reason not in ("undo", "redo"):
        raise ParamsError("reason must be undo or redo")
    return UndoParams(
        uri=_uri(obj, required=True), version=_int(obj, "version", minimum=None), reason=reason
    )


def _time(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ParamsError(f"{key} must be epoch seconds or an ISO 8601 time") from None
        if moment.tzinfo is None:
            moment = moment.astimezone()
        return moment.timestamp()
    return _float(obj, key)


def parse_test_run(params: Any) -> TestRunParams:
    obj = _object(params)
    failing = obj.get("failingIds") or []
    if not isinstance(failing, list) or not all(isinstance(f, str) for f in failing):
        raise ParamsError("failingIds must be a list of strings")
    workspace = _path(obj, "workspace") or _path(obj, "workspaceUri")
    return TestRunParams(
        command=_str(obj, "command", required=True),
        name=_str(obj, "name", limit=1000),
        cwd=_path(obj, "cwd"),
        workspace=workspace,
        started_at=_time(obj, "startedAt"),
        duration_s=_float(obj, "durationS"),
        exit_code=_int(obj, "exitCode", minimum=EXIT_MIN, maximum=EXIT_MAX),
        passed=_int(obj, "passed"),
        failed=_int(obj, "failed"),
        errors=_int(obj, "errors"),
        skipped=_int(obj, "skipped"),
        failing_ids=tuple(escape(f[:1000]) for f in failing[:10_000]),
        run_id=_str(obj, "id", limit=200),
    )
