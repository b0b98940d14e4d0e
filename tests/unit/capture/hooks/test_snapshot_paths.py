"""The fast lane's snapshot: which payloads name files to read, and which files."""

from __future__ import annotations

import json

from capture.hooks.agents import claude_code, codex, copilot, cursor, gemini
from capture.hooks.snapshot import EDIT_TOOLS, edit_paths


def test_every_tool_an_agent_reader_records_as_an_edit_is_snapshotted() -> None:
    readers = (
        claude_code.EDIT_TOOLS
        | codex.PATCH_TOOLS
        | copilot.EDIT_TOOLS
        | copilot.CREATE_TOOLS
        | copilot.VAGUE_EDIT_TOOLS
        | cursor.WRITE_TOOLS
        | gemini.REPLACE_TOOLS
        | gemini.WRITE_TOOLS
    )
    assert readers <= EDIT_TOOLS, sorted(readers - EDIT_TOOLS)


def test_the_paths_of_an_edit_payload_are_found_without_parsing_json() -> None:
    payload = {
        "cwd": "/ws",
        "tool_name": "Edit",
        "tool_input": {"file_path": 'src/a "quoted" \u00e9.py'},
        "tool_response": {"filePath": '/ws/src/a "quoted" \u00e9.py', "content": '"path": "x"'},
    }
    assert edit_paths(json.dumps(payload).encode(), "/elsewhere") == ['/ws/src/a "quoted" é.py']


def test_a_shell_or_read_payload_names_nothing_to_snapshot() -> None:
    for tool in ("Bash", "Read", "Grep"):
        raw = json.dumps({"tool_name": tool, "tool_input": {"file_path": "/ws/a.py"}}).encode()
        assert edit_paths(raw, "/ws") == []


def test_the_files_of_an_apply_patch_run_through_the_shell() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n"
        "*** Add File: b.py\n+z\n*** End Patch\n"
    )
    raw = json.dumps({"tool_name": "shell", "cwd": "/ws", "tool_input": {"command": patch}})
    assert edit_paths(raw.encode(), "/ws") == ["/ws/a.py", "/ws/b.py"]


def test_copilot_tool_arguments_are_a_json_text() -> None:
    raw = json.dumps({"toolName": "edit", "cwd": "/ws", "toolArgs": json.dumps({"path": "a.py"})})
    assert edit_paths(raw.encode(), "/ws") == ["/ws/a.py"]
