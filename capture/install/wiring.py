"""What `capture doctor` says is wired up, decided from file texts: capture's hook entries in an
agent's settings, and the editors the server's log saw. Plain functions; the doctor reads the
files."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable

from capture.install.targets import Target, handler_command, is_ours

__all__ = ["HookEntries", "editors_seen", "hook_entries"]


class HookEntries:
    """capture's handlers in one settings file: how many events, and whether any names a path
    of this machine (an install from before hooks ran `capture` by name)."""

    __slots__ = ("events", "by_path")

    def __init__(self, events: int, by_path: bool) -> None:
        self.events = events
        self.by_path = by_path


def hook_entries(text: str | None, target: Target) -> HookEntries | None:
    """None when the file is absent, unreadable as JSON, or holds none of capture's handlers."""
    if text is None:
        return None
    try:
        document = json.loads(text)
    except ValueError:
        return None
    hooks = document.get("hooks") if isinstance(document, dict) else None
    if not isinstance(hooks, dict):
        return None
    events = 0
    by_path = False
    for entries in hooks.values():
        if not isinstance(entries, list):
            continue
        ours: list[object] = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            inner = entry.get("hooks")
            handlers = inner if isinstance(inner, list) else [entry]
            ours.extend(h for h in handlers if is_ours(h, target.agent))
        if ours:
            events += 1
            by_path = by_path or any(
                os.path.isabs((handler_command(h) or "").split(" ", 1)[0].strip("'\""))
                for h in ours
            )
    return HookEntries(events, by_path) if events else None


_INITIALIZE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\S* \d+ \w+ \S+: initialize: client (?P<name>.+?), "
    r"encoding"
)


def editors_seen(lines: Iterable[str]) -> dict[str, str]:
    """The editors (LSP client names) the server's log shows starting it, each with the last
    time it did."""
    seen: dict[str, str] = {}
    for line in lines:
        found = _INITIALIZE.match(line)
        if found:
            name, at = found["name"], found["at"]
            if at >= seen.get(name, ""):
                seen[name] = at
    return seen
