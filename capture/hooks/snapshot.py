"""The files an edit payload names, read by the fast lane at the moment the hook fires.

The queue is applied later (tens of milliseconds, seconds under load); by then the agent may
have written the file again, a formatter may have run, the user may have reverted it. So the
fast lane keeps the bytes each edit payload's files hold right now beside the queued payload,
and the applier places the edit in them (`capture.hooks.ingest`).

Which files: the paths an edit tool's input names (`file_path`, `path`, ... at the usual
places of each agent's payload, and the files of an `apply_patch` text). Payloads of other
tools cost one scan of their bytes for a few markers. Only regular
files are read, with a size bound, so a FIFO or a device named by a payload never blocks the
agent.

Imports: `os` alone (`capture.files` once there is a file to read). JSON is scanned by hand for
the few keys it needs, as `json` and the `re` it brings cost more than the fast lane may spend.
"""

from __future__ import annotations

import os

__all__ = [
    "EDIT_TOOLS",
    "MAX_FILES",
    "Snapshot",
    "edit_paths",
    "take",
]

#: Tool names that write files, across the agents (their readers in capture.hooks.agents hold
#: the same names; a test keeps the two in step).
EDIT_TOOLS = frozenset(
    {
        # Claude Code, Codex, Cursor
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "apply_patch",
        "StrReplace",
        "edit_file",
        "search_replace",
        # Gemini CLI
        "replace",
        "edit",
        "smart_edit",
        "write_file",
        "write",
        # Copilot, VS Code
        "str_replace",
        "str_replace_editor",
        "replaceString",
        "create",
        "createFile",
        "editFiles",
        "applyPatch",
        "insertEdit",
        "replace_string_in_file",
        "create_file",
    }
)

#: Events that carry an edit without naming a tool (Cursor).
EDIT_EVENTS = frozenset({"afterFileEdit", "afterTabFileEdit"})

#: A payload naming more files than this is read for its first ones only.
MAX_FILES = 16

_PATH_KEYS = (
    "file_path",
    "filePath",
    "path",
    "target_file",
    "absolute_path",
    "notebook_path",
    "files",
)
_EVENT_KEYS = ("hook_event_name", "hookEventName")
_MARKERS = (b"_path", b'"path"', b"Path", b"File: ", b'"files"', b"toolArgs", b"target_file")
_PATCH_HEADERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")


class Snapshot:
    """One file as the hook saw it: its bytes, or why there are none. Plain class: see
    capture.hooks.agents.facts."""

    __slots__ = ("path", "content", "size", "problem")

    def __init__(
        self, path: str, content: bytes | None, size: int | None, problem: str | None
    ) -> None:
        self.path = path
        self.content = content
        self.size = size
        self.problem = problem

    def __repr__(self) -> str:
        return f"Snapshot({self.path!r}, {self.size!r} bytes, problem={self.problem!r})"


_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "/": "/"}


def _unescape(body: str) -> str:
    """A JSON string literal's content, decoded by hand: `json` (and the `re` it imports) cost
    more than the whole fast lane is allowed."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 >= len(body):
            out.append(char)
            i += 1
            continue
        code = body[i + 1]
        if code == "u" and i + 6 <= len(body):
            try:
                point = int(body[i + 2 : i + 6], 16)
            except ValueError:
                point = 0xFFFD
            i += 6
            if 0xD800 <= point < 0xDC00 and body[i : i + 2] == "\\u":
                try:
                    low = int(body[i + 2 : i + 6], 16)
                except ValueError:
                    low = 0
                if 0xDC00 <= low < 0xE000:
                    point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            out.append(chr(point))
            continue
        out.append(_ESCAPES.get(code, code))
        i += 2
    return "".join(out)


def _string_at(raw: bytes, at: int) -> tuple[str, int] | None:
    """The JSON string literal starting at raw[at] (a quote), and the offset after it."""
    end = at + 1
    while True:
        end = raw.find(b'"', end)
        if end < 0:
            return None
        backslashes = 0
        while raw[end - 1 - backslashes] == 0x5C:
            backslashes += 1
        if backslashes % 2 == 0:
            break
        end += 1
    return _unescape(raw[at + 1 : end].decode("utf-8", "replace")), end + 1


def _skip_space(raw: bytes, at: int) -> int:
    while at < len(raw) and raw[at] in b" \t\r\n":
        at += 1
    return at


def _values(raw: bytes, key: str) -> list[str]:
    """Every string value of `key` anywhere in a JSON text, and the strings of a list value.
    A key inside a string literal is escaped (\\"key\\"), so it is never matched."""
    needle = f'"{key}"'.encode()
    found: list[str] = []
    at = raw.find(needle)
    while at >= 0 and len(found) < MAX_FILES:
        pos = _skip_space(raw, at + len(needle))
        if pos < len(raw) and raw[pos] == 0x3A:  # ':'
            pos = _skip_space(raw, pos + 1)
            if pos < len(raw) and raw[pos] == 0x22:  # a string
                value = _string_at(raw, pos)
                if value is not None:
                    found.append(value[0])
            elif pos < len(raw) and raw[pos] == 0x5B:  # a list: its strings
                pos = _skip_space(raw, pos + 1)
                while pos < len(raw) and raw[pos] == 0x22 and len(found) < MAX_FILES:
                    value = _string_at(raw, pos)
                    if value is None:
                        break
                    found.append(value[0])
                    pos = _skip_space(raw, value[1])
                    if pos < len(raw) and raw[pos] == 0x2C:  # ','
                        pos = _skip_space(raw, pos + 1)
        at = raw.find(needle, at + len(needle))
    return found


def _first(raw: bytes, *keys: str) -> str:
    for key in keys:
        values = _values(raw, key)
        if values:
            return values[0]
    return ""


def _patch_paths(raw: bytes) -> list[str]:
    """The files of an apply_patch text inside the payload (its line breaks escaped as \\n)."""
    found: list[str] = []
    for header in _PATCH_HEADERS:
        needle = header.encode()
        at = raw.find(needle)
        while at >= 0 and len(found) < MAX_FILES:
            start = at + len(needle)
            ends = [e for e in (raw.find(b"\\n", start), raw.find(b'"', start)) if e >= 0]
            end = min(ends) if ends else len(raw)
            found.append(_unescape(raw[start:end].decode("utf-8", "replace")).strip())
            at = raw.find(needle, end)
    return found


def edit_paths(raw: bytes, cwd: str, event: str | None = None) -> list[str]:
    """Absolute paths of the files an edit payload names (none for any other payload)."""
    if not any(marker in raw for marker in _MARKERS):
        return []
    tool = _first(raw, "tool_name", "toolName")
    edits = tool in EDIT_TOOLS or (event or _first(raw, *_EVENT_KEYS)) in EDIT_EVENTS
    # a shell tool that ran apply_patch (Codex) edits the files of its patch
    if not edits and b"*** Begin Patch" not in raw:
        return []
    found: list[str] = []
    for key in _PATH_KEYS:
        found.extend(_values(raw, key))
    found.extend(_patch_paths(raw))
    for args in _values(raw, "toolArgs"):  # Copilot: the tool's arguments as a JSON text
        encoded = args.encode("utf-8", "replace")
        for key in _PATH_KEYS:
            found.extend(_values(encoded, key))
    base = _first(raw, "cwd")
    base = base if os.path.isabs(base) else cwd
    paths: list[str] = []
    for path in found:
        if not path or len(path) > 4096 or "\x00" in path:
            continue
        full = os.path.realpath(os.path.join(base, os.path.expanduser(path)))
        if full not in paths:
            paths.append(full)
    return paths[:MAX_FILES]


def take(path: str, limit: int) -> Snapshot:
    """The file's bytes now: only a regular file, opened without blocking, of at most `limit`
    bytes (`capture.files.read_regular`, imported only for a payload that names a file)."""
    from capture.files import read_regular

    return Snapshot(path, *read_regular(path, limit))
