"""What the doctor reads as wired up: capture's hook entries in a settings file, and the editors
in the server's log."""

from __future__ import annotations

import json
import logging

from capture.install.settings import install_text
from capture.install.targets import TARGETS
from capture.install.wiring import editors_seen, hook_entries
from server.logs import _FORMAT


def test_installed_entries_are_counted_and_an_old_path_install_is_told() -> None:
    target = TARGETS["claude-code"]
    by_name = install_text(None, target, "capture hook claude-code", "settings.json")
    found = hook_entries(by_name, target)
    assert found is not None and (found.events, found.by_path) == (len(target.events), False)
    by_path = install_text(None, target, "/home/u/.venv/bin/capture hook claude-code", "s.json")
    found = hook_entries(by_path, target)
    assert found is not None and found.by_path
    # another agent's entries, the user's own, junk: none of capture's for this agent
    assert hook_entries(by_name, TARGETS["codex"]) is None
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send"}]}]}}
    assert hook_entries(json.dumps(theirs), target) is None
    assert hook_entries("{not json", target) is None
    assert hook_entries(None, target) is None


def test_editors_are_read_from_the_server_s_own_log_lines() -> None:
    formatter = logging.Formatter(_FORMAT)

    def line(client: str, created: float) -> str:
        record = logging.LogRecord(
            "server.app",
            logging.INFO,
            __file__,
            1,
            "initialize: client %s, encoding %s, folders %s",
            (client, "utf-16", ["/w"]),
            None,
        )
        record.created = created
        return formatter.format(record)

    lines = [
        line("Visual Studio Code", 1.7e9),
        line("Neovim", 1.7e9 + 60),
        "noise",
        line("Visual Studio Code", 1.7e9 + 3600),
    ]
    seen = editors_seen(lines)
    assert sorted(seen) == ["Neovim", "Visual Studio Code"]
    assert seen["Visual Studio Code"] > seen["Neovim"]
