"""`capture propose` input: one proposal as a JSON object (docs/getting-started.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capture.edits.unidiff import parse_unified_diff
from capture.errors import InputError
from capture.files import find_workspace
from capture.model import HunkInput, ProposalInput, State

__all__ = ["MAX_INPUT_BYTES", "PROPOSAL_FIELDS", "parse_proposal"]

MAX_INPUT_BYTES = 10 * 1024 * 1024

PROPOSAL_FIELDS = {
    "file": "path of the edited file (absolute, or relative to the current directory)",
    "old_text": "text the edit replaced (with new_text: a single hunk)",
    "new_text": "text the edit wrote",
    "line": "1-based line where new_text starts (optional; needed for a pure deletion)",
    "edits": "several hunks: a list of {old_text, new_text, line?}",
    "diff": "a unified diff instead of old_text/new_text",
    "agent": "who proposed it (claude-code, cursor, ...; default 'cli')",
    "model": "model name",
    "session_id": "agent session id",
    "turn_id": "agent turn/prompt id; proposals with the same one form one episode",
    "prompt": "the prompt text (kept locally)",
    "tool": "the agent tool that made the edit",
    "state": "applied (default: the file already holds new_text), shown, or rejected",
    "created_file": "true when the edit created the file (deleting it then undoes the edit)",
    "workspace": "workspace root (default: the enclosing git work tree)",
}


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"field {name!r} must be a string")
    return value


def _hunks(obj: dict[str, Any]) -> tuple[list[HunkInput], str | None]:
    kinds = [k for k in ("edits", "diff", "new_text") if k in obj]
    if len(kinds) != 1:
        raise InputError("give exactly one of: old_text/new_text, edits, diff")
    if "diff" in obj:
        target, hunks = parse_unified_diff(_text(obj["diff"], "diff"))
        return hunks, target
    if "edits" in obj:
        edits = obj["edits"]
        if not isinstance(edits, list) or not edits:
            raise InputError("field 'edits' must be a non-empty list")
        hunks = []
        for i, edit in enumerate(edits):
            if not isinstance(edit, dict) or "new_text" not in edit:
                raise InputError(f"edits[{i}] must be an object with new_text")
            unknown = set(edit) - {"old_text", "new_text", "line"}
            if unknown:
                raise InputError(f"edits[{i}]: unknown field(s): {', '.join(sorted(unknown))}")
            hunks.append(
                HunkInput(
                    _text(edit.get("old_text", ""), "old_text"),
                    _text(edit["new_text"], "new_text"),
                    line=_line(edit.get("line")),
                )
            )
        return hunks, None
    hunk = HunkInput(
        _text(obj.get("old_text", ""), "old_text"),
        _text(obj["new_text"], "new_text"),
        line=_line(obj.get("line")),
    )
    return [hunk], None


def _line(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InputError("field 'line' must be a positive integer")
    return value


def parse_proposal(raw: bytes, cwd: Path) -> ProposalInput:
    """Validate a `capture propose` body. Raises InputError with one line saying what is wrong."""
    if len(raw) > MAX_INPUT_BYTES:
        raise InputError(f"input too large: over {MAX_INPUT_BYTES // (1024 * 1024)} MB")
    if not raw.strip():
        raise InputError("no input: expected one JSON object on stdin")
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"input is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise InputError("input must be a JSON object")
    unknown = set(obj) - set(PROPOSAL_FIELDS)
    if unknown:
        raise InputError(f"unknown field(s): {', '.join(sorted(unknown))}")
    hunks, diff_target = _hunks(obj)
    file_value = obj.get("file", diff_target)
    if not file_value:
        raise InputError("field 'file' is required")
    path = Path(_text(file_value, "file")).expanduser()
    if not path.is_absolute():
        path = cwd / path
    path = path.resolve()
    try:
        state = State(obj.get("state", "applied"))
    except ValueError:
        raise InputError("field 'state' must be one of: applied, shown, rejected") from None
    workspace = obj.get("workspace")
    root = Path(_text(workspace, "workspace")) if workspace else find_workspace(path, cwd)
    created = obj.get("created_file", False)
    if not isinstance(created, bool):
        raise InputError("field 'created_file' must be true or false")
    optional = {
        k: _text(obj[k], k) if obj.get(k) is not None else None
        for k in ("model", "session_id", "turn_id", "prompt", "tool")
    }
    return ProposalInput(
        path=str(path),
        workspace=str(root.resolve()),
        agent=_text(obj.get("agent", "cli"), "agent"),
        hunks=hunks,
        state=state,
        created_file=created,
        source="cli",
        **optional,  # type: ignore[arg-type]
    )
