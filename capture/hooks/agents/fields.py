"""Reading payload fields defensively: agents rename fields between versions, send strings
where objects were documented, and leave fields out."""

from __future__ import annotations

import json
import os
import re
from typing import Any

__all__ = [
    "absolute",
    "as_object",
    "content_key",
    "escape_surrogates",
    "exit_code_in",
    "first_text",
    "number",
    "windows_path",
]


def first_text(obj: Any, *names: str) -> str | None:
    """The first of `names` whose value is a string (old and new spellings of one field)."""
    if not isinstance(obj, dict):
        return None
    for name in names:
        value = obj.get(name)
        if isinstance(value, str):
            return value
    return None


def number(obj: Any, *names: str) -> float | None:
    if not isinstance(obj, dict):
        return None
    for name in names:
        value = obj.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def as_object(value: Any) -> dict[str, Any] | None:
    """A JSON object, also when it arrives serialized as a string (Copilot's toolArgs, Cursor's
    tool_output)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


#: a Windows working directory ("C:\\Users\\...", "c:/src")
_WINDOWS_DIR = re.compile(r"^[A-Za-z]:[\\/]")
#: a Git-Bash (MSYS) path of a drive: "/c/Users/..."
_MSYS_DRIVE = re.compile(r"^/([A-Za-z])(?=/|$)")


def windows_path(path: str, cwd: str) -> str:
    """`path` as Windows spells it, for an agent running in Git Bash against a Windows working
    directory: "/c/Users/dana/a.py" is "C:\\Users\\dana\\a.py"; relative paths join `cwd`."""
    import ntpath

    drive = _MSYS_DRIVE.match(path)
    if drive is not None:
        path = drive.group(1).upper() + ":" + (path[drive.end() :] or "/")
    if not ntpath.isabs(path):
        path = ntpath.join(cwd, path)
    return ntpath.normpath(path)


def absolute(path: str, cwd: str | None) -> str:
    """`path` made absolute against the agent's working directory (Codex and Copilot send paths
    relative to it)."""
    if cwd and _WINDOWS_DIR.match(cwd):
        return windows_path(path, cwd)
    path = os.path.expanduser(path)
    if os.path.isabs(path) or not cwd:
        return os.path.normpath(path)
    return os.path.normpath(os.path.join(cwd, path))


def content_key(*parts: object) -> str:
    """A short stable digest: the dedupe key of a payload that carries no id of its own."""
    import hashlib  # here: most payloads carry ids and never need it

    digest = hashlib.sha1(usedforsecurity=False)
    for part in parts:
        digest.update(str(part).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.hexdigest()[:20]


# "Exit code 2" (Claude Code's PostToolUseFailure), "Exit Code: 1" (Gemini's llmContent),
# "Process exited with code 1" (Codex's tool output), "exit status 1".
_EXIT_CODE = re.compile(
    r"^(?:Error: )?Exit code (\d+)\s*$|^Exit Code: (\d+)\s*$|Process exited with code (\d+)"
    r"|\bexit(?:ed with)? (?:status|code) (\d+)",
    re.MULTILINE | re.IGNORECASE,
)


def exit_code_in(text: str) -> int | None:
    match = _EXIT_CODE.search(text)
    if match is None:
        return None
    return int(next(g for g in match.groups() if g is not None))


def escape_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) written as its escape."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {escape_surrogates(k): escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape_surrogates(v) for v in value]
    return value
