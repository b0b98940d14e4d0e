"""Merging capture's hook entries into settings text and taking them out again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capture.errors import InputError
from capture.install.jsontext import parse
from capture.install.settings import add_notify, install_text, remove_notify, uninstall_text
from capture.install.targets import TARGETS, is_ours

EXAMPLES = Path(__file__).resolve().parents[3] / "fixtures" / "agent-formats" / "examples"
COMMAND = "/opt/venv/bin/capture hook {agent}"
SETTINGS = {
    "claude-code": "claude_code_settings_hooks.json",
    "cursor": "cursor_hooks_config.json",
    "codex": "codex_hooks_config.json",
    "gemini": "gemini_settings_hooks.json",
    "copilot": "copilot_hooks_config.json",
}


def ours(document: dict, agent: str) -> dict[str, int]:
    """How many capture handlers each event holds."""
    found: dict[str, int] = {}
    for event, entries in document.get("hooks", {}).items():
        for entry in entries:
            handlers = entry.get("hooks", [entry]) if TARGETS[agent].shape == "grouped" else [entry]
            found[event] = found.get(event, 0) + sum(is_ours(h, agent) for h in handlers)
    return {event: n for event, n in found.items() if n}


def user_entries(document: dict, agent: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for event, entries in document.get("hooks", {}).items():
        kept = [e for e in entries if not ours({"hooks": {event: [e]}}, agent).get(event)]
        if kept:
            out[event] = kept
    return out


@pytest.mark.parametrize("agent", sorted(SETTINGS))
def test_install_then_uninstall_gives_back_the_users_file(agent: str) -> None:
    target = TARGETS[agent]
    original = (EXAMPLES / SETTINGS[agent]).read_text()
    command = COMMAND.format(agent=agent)
    installed = install_text(original, target, command, "settings.json")
    before, after = json.loads(original), json.loads(installed)
    assert user_entries(after, agent) == user_entries(before, agent)
    assert {k: v for k, v in before.items() if k != "hooks"} == {
        k: v for k, v in after.items() if k != "hooks"
    }
    assert ours(after, agent) == {event: 1 for event, _ in target.events}
    # the user's own lines are all still there, in order (a comma may end one now)
    remaining = iter(line.rstrip(",") for line in installed.splitlines())
    assert all(line.rstrip(",") in remaining for line in original.splitlines())
    assert install_text(installed, target, command, "settings.json") == installed
    text, bare = uninstall_text(installed, target, "settings.json")
    assert text == original and not bare


@pytest.mark.parametrize("agent", sorted(SETTINGS))
def test_a_new_file_holds_only_capture(agent: str) -> None:
    target = TARGETS[agent]
    created = install_text(None, target, COMMAND.format(agent=agent), "settings.json")
    document = json.loads(created)
    assert ours(document, agent) == {event: 1 for event, _ in target.events}
    assert {k: v for k, v in document.items() if k != "hooks"} == target.skeleton
    _, bare = uninstall_text(created, target, "settings.json")
    assert bare


def test_comments_crlf_and_compact_files_are_kept() -> None:
    target = TARGETS["gemini"]
    original = (
        '{\r\n  // my own hook\r\n  "hooks": {\r\n    "AfterTool": [\r\n'
        '      {"matcher": "x", "hooks": [{"type": "command", "command": "mine"}]} /* ok */\r\n'
        '    ]\r\n  },\r\n  "theme": "dark"\r\n}\r\n'
    )
    installed = install_text(original, target, "capture hook gemini", "s")
    assert "\n" not in installed.replace("\r\n", "")  # still CRLF only
    assert "// my own hook" in installed and "/* ok */" in installed
    assert uninstall_text(installed, target, "s") == (original, False)
    compact = '{"hooks":{"AfterTool":[{"matcher":"x","hooks":[]}]},"a":[1,2]}'
    installed = install_text(compact, target, "capture hook gemini", "s")
    assert uninstall_text(installed, target, "s") == (compact, False)


def test_a_handler_the_user_moved_into_their_own_group_is_removed_alone() -> None:
    target = TARGETS["claude-code"]
    text = json.dumps(
        {
            "hooks": {
                "Stop": [
                    {
                        "hooks": [
                            {"type": "command", "command": "mine"},
                            {"type": "command", "command": "'/x/bin/capture' hook claude-code"},
                        ]
                    }
                ]
            }
        },
        indent=2,
    )
    cleaned, bare = uninstall_text(text, target, "s")
    assert json.loads(cleaned) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}
    }


def test_unreadable_settings_are_refused() -> None:
    with pytest.raises(InputError, match="cannot read it"):
        install_text('{"hooks": [1, }', TARGETS["cursor"], "c", "hooks.json")
    with pytest.raises(InputError, match='"hooks" is not an object'):
        install_text('{"hooks": []}', TARGETS["cursor"], "c", "hooks.json")


def test_is_ours() -> None:
    assert is_ours({"command": "/v/bin/capture hook cursor"}, "cursor")
    assert is_ours({"command": "'/v/bin/python3' -m capture hook cursor"}, "cursor")
    assert is_ours({"bash": "/v/bin/capture hook copilot --event preToolUse"}, "copilot")
    assert not is_ours({"command": "/v/bin/capture hook cursor"}, "codex")
    assert not is_ours({"command": "python3 .cursor/hooks/recorder.py"}, "cursor")
    assert not is_ours({"type": "http", "url": "http://x"}, "cursor")


def test_codex_notify() -> None:
    argv = ["/v/bin/capture", "hook", "codex"]
    config = 'model = "gpt-5.5"\n\n[features]\ncodex_hooks = true\n'
    added, note = add_notify(config, argv)
    assert note is None
    assert added.splitlines()[2] == 'notify = ["/v/bin/capture", "hook", "codex"]'
    assert add_notify(added, argv) == (added, None)
    assert remove_notify(added) == config
    for original in ("", "model = 'x'", "model = 'x'\n"):
        assert remove_notify(add_notify(original, argv)[0]) == original
    theirs = 'notify = ["python3", "/home/me/notify.py"]\n'
    assert add_notify(theirs, argv)[0] == theirs
    assert "another program" in (add_notify(theirs, argv)[1] or "")
    assert remove_notify(theirs) == theirs


JSON_SCALARS = st.one_of(st.integers(), st.booleans(), st.none(), st.text(max_size=8))
HANDLER = st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.text(min_size=1, max_size=12)}
)
GROUP = st.fixed_dictionaries(
    {"hooks": st.lists(HANDLER, max_size=2)},
    optional={"matcher": st.sampled_from(["Bash", "Edit|Write", "*"])},
)
EVENTS = st.sampled_from(["SessionStart", "PreToolUse", "PostToolUse", "Stop", "Custom"])


@settings(max_examples=150, deadline=None)
@given(
    # an empty "hooks" object or event list of the user's own is the one case the text alone
    # cannot tell from one capture made: `capture uninstall` restores those from the backup
    hooks=st.one_of(
        st.none(),
        st.dictionaries(EVENTS, st.lists(GROUP, min_size=1, max_size=3), min_size=1, max_size=4),
    ),
    other=st.dictionaries(st.text(max_size=6), JSON_SCALARS, max_size=3),
    indent=st.sampled_from([None, 2, 4, "\t"]),
    trailing=st.sampled_from(["", "\n", "\n\n"]),
)
def test_any_settings_file_round_trips(
    hooks: dict | None, other: dict, indent: int | str | None, trailing: str
) -> None:
    document = {k: v for k, v in other.items() if k != "hooks"}
    if hooks is not None:
        document["hooks"] = hooks
    original = json.dumps(document, indent=indent) + trailing
    target = TARGETS["claude-code"]
    installed = install_text(original, target, "capture hook claude-code", "s")
    parse(installed)
    assert ours(json.loads(installed), "claude-code") == {e: 1 for e, _ in target.events}
    text, bare = uninstall_text(installed, target, "s")
    assert text == original
    assert bare == (not document)
