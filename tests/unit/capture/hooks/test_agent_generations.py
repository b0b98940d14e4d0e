"""Each agent's format generations, read by the pure readers: the older and newer field names of
Claude Code's results, Codex rollouts before and after 0.3x and apply_patch run as a shell
command, VS Code's snake-case tool names, Git-Bash paths, lone surrogate escapes. The records
are shaped as the public logs and format notes show each generation (see
tests/fixtures/real/PROVENANCE.md for the ones copied whole)."""

from __future__ import annotations

import json

from capture.hooks.agents import claude_code, copilot
from capture.hooks.agents.facts import Command, Edit, Prompt
from capture.hooks.agents.fields import absolute, escape_surrogates, windows_path
from capture.hooks.payloads import parse_payload
from capture.importers.claude_transcript import read_transcript
from capture.importers.codex_rollout import ROLLOUT_GENERATIONS, read_rollout, shell_patch

ORIGINAL = "def a():\n    return 1\n\n\ndef b():\n    return 3\n"
AFTER = "def a():\n    return 2\n\n\ndef b():\n    return 2\n"
EDITS = [
    {"old_string": "return 1", "new_string": "return 2", "replace_all": False},
    {"old_string": "return 3", "new_string": "return 2", "replace_all": False},
]


def _lines(*records: dict) -> list[str]:
    return [json.dumps(r) + "\n" for r in records]


def _claude_call(
    name: str, tool_input: dict, result: object, content: str, *, error: bool
) -> list[str]:
    return _lines(
        {
            "type": "assistant",
            "sessionId": "s",
            "cwd": "/ws",
            "timestamp": "2025-07-01T10:00:01Z",
            "message": {
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": [{"type": "tool_use", "id": "t1", "name": name, "input": tool_input}],
            },
        },
        {
            "type": "user",
            "sessionId": "s",
            "cwd": "/ws",
            "timestamp": "2025-07-01T10:00:02Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": content,
                        "is_error": error,
                    }
                ],
            },
            "toolUseResult": result,
        },
    )


def test_the_original_file_of_claude_code_1_0_is_read_under_its_old_name() -> None:
    result = {"filePath": "/ws/m.py", "edits": EDITS, "originalFileContents": ORIGINAL}
    history = read_transcript(
        _claude_call(
            "MultiEdit", {"file_path": "/ws/m.py", "edits": EDITS}, result, "ok", error=False
        )
    )
    (past,) = history.edits
    assert past.after == AFTER
    # before and after known: the hunks are worked out between them, each at its own place
    assert past.edit.original == ORIGINAL and past.edit.written == AFTER
    assert claude_code.after_of("MultiEdit", {"edits": EDITS}, result) == AFTER
    assert claude_code.ORIGINAL_FILE == ("originalFile", "originalFileContents")


def test_the_original_file_is_read_under_either_name() -> None:
    for name in claude_code.ORIGINAL_FILE:
        assert claude_code.original_of({"filePath": "/ws/m.py", name: ORIGINAL}) == ORIGINAL
        (write,) = claude_code.edits_of(
            "Write",
            {"file_path": "/ws/m.py", "content": AFTER},
            {"type": "update", "filePath": "/ws/m.py", name: ORIGINAL},
            stage=claude_code.Stage.APPLIED,
            tool_use_id="t1",
            cwd="/ws",
        )
        assert isinstance(write, Edit) and write.original == ORIGINAL
        assert not write.created_file
    (created,) = claude_code.edits_of(
        "Write",
        {"file_path": "/ws/n.py", "content": AFTER},
        {"filePath": "/ws/n.py", "originalFileContents": None},
        stage=claude_code.Stage.APPLIED,
        tool_use_id="t2",
        cwd="/ws",
    )
    assert created.created_file


def test_a_failed_command_of_1_0_5x_without_an_exit_code_line_ran_and_failed() -> None:
    output = "....F\n=================== FAILURES ===================\n1 failed, 4 passed in 0.12s"
    history = read_transcript(
        _claude_call(
            "Bash", {"command": "python -m pytest -q"}, "Error: " + output, output, error=True
        )
    )
    (run,) = history.runs
    assert run.command.failure is None and run.command.exit_code is None
    assert "1 failed, 4 passed" in run.command.output


def test_a_command_that_could_not_start_or_was_refused() -> None:
    started = read_transcript(
        _claude_call(
            "Bash", {"command": "pytestt"}, "Error: x", "Error: pytestt: not found", error=True
        )
    )
    assert started.runs[0].command.failure == "did not start"
    coded = read_transcript(
        _claude_call(
            "Bash", {"command": "pytest"}, "", "Error: Exit code 2\nno tests ran", error=True
        )
    )
    assert coded.runs[0].command.exit_code == 2 and coded.runs[0].command.output == "no tests ran"
    stopped = "[Request interrupted by user for tool use]"
    interrupted = read_transcript(
        _claude_call("Bash", {"command": "pytest"}, stopped, stopped, error=True)
    )
    assert interrupted.runs[0].command.failure == "interrupted"
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    assert (
        read_transcript(
            _claude_call("Bash", {"command": "pytest"}, refused, refused, error=True)
        ).runs
        == []
    )


def test_an_interruption_is_no_prompt() -> None:
    history = read_transcript(
        _lines(
            {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "fix it"}},
            {
                "type": "user",
                "sessionId": "s",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "[Request interrupted by user]"}],
                },
            },
        )
    )
    assert [t.prompt for t in history.turns] == ["fix it"]


PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"


def test_a_bare_rollout_before_0_3_is_read() -> None:
    call_output = json.dumps(
        {"output": "Done!", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}
    )
    test_output = json.dumps({"output": "1 passed in 0.01s", "metadata": {"exit_code": 0}})
    lines = _lines(
        {"id": "0a1b", "timestamp": "2025-05-20T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/ws</cwd>\n</environment_context>",
                }
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "make x two"}],
        },
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["apply_patch", PATCH]}),
            "call_id": "c1",
        },
        {"type": "function_call_output", "call_id": "c1", "output": call_output},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]}),
            "call_id": "c2",
        },
        {"type": "function_call_output", "call_id": "c2", "output": test_output},
        {"record_type": "state"},
    )
    history = read_rollout(lines)
    assert history.bad_lines == 0
    assert history.session_id == "0a1b" and history.cwd == "/ws"
    assert [t.prompt for t in history.turns] == ["make x two"]
    (past,) = history.edits
    assert past.edit.path == "/ws/a.py" and past.turn is history.turns[0]
    assert [(h.old_text, h.new_text) for h in past.edit.hunks] == [("x = 1\n", "x = 2\n")]
    (run,) = history.runs
    assert run.command.command == "pytest -q" and run.command.exit_code == 0
    assert ROLLOUT_GENERATIONS == ("bare", "wrapped")


def test_apply_patch_as_a_shell_command_of_codex_0_58() -> None:
    heredoc = ["bash", "-lc", "apply_patch <<'EOF'\n" + PATCH + "EOF\n"]
    failed = json.dumps({"output": "error: patch did not apply", "metadata": {"exit_code": 1}})
    lines = _lines(
        {
            "timestamp": "2025-11-20T10:00:00Z",
            "type": "session_meta",
            "payload": {"id": "s", "cwd": "/ws", "cli_version": "0.58.0"},
        },
        {
            "timestamp": "2025-11-20T10:00:01Z",
            "type": "turn_context",
            "payload": {"cwd": "/ws", "model": "gpt-5-codex"},
        },
        {
            "timestamp": "2025-11-20T10:00:01Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "make x two"},
        },
        {
            "timestamp": "2025-11-20T10:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": heredoc, "workdir": "/ws"}),
                "call_id": "c1",
            },
        },
        {
            "timestamp": "2025-11-20T10:00:03Z",
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": "c1",
                "output": json.dumps({"output": "Success.", "metadata": {"exit_code": 0}}),
            },
        },
        {
            "timestamp": "2025-11-20T10:00:04Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["apply_patch", PATCH]}),
                "call_id": "c2",
            },
        },
        {
            "timestamp": "2025-11-20T10:00:05Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c2", "output": failed},
        },
    )
    history = read_rollout(lines)
    assert [p.edit.stage.name for p in history.edits] == ["APPLIED", "FAILED"]
    assert history.runs == []  # an apply_patch is an edit, not a command run
    assert shell_patch("apply_patch <<'EOF'\n" + PATCH + "EOF") == PATCH
    assert shell_patch("git apply x.patch") is None


def test_vs_code_snake_case_tools() -> None:
    base = {"hookEventName": "PostToolUse", "sessionId": "s", "cwd": "/ws"}
    shell = copilot.read(
        {
            **base,
            "tool_name": "run_in_terminal",
            "tool_input": {"command": "npm test"},
            "tool_response": "ok",
        },
        {},
    )
    assert [f.command for f in shell.facts if isinstance(f, Command)] == ["npm test"]
    edit = copilot.read(
        {
            **base,
            "tool_name": "replace_string_in_file",
            "tool_input": {"filePath": "/ws/a.py", "oldString": "x = 1", "newString": "x = 2"},
            "tool_response": "ok",
        },
        {},
    )
    assert [f.path for f in edit.facts if isinstance(f, Edit)] == ["/ws/a.py"]


def test_git_bash_paths_against_a_windows_working_directory() -> None:
    cwd = "C:\\Users\\dana\\src"
    assert absolute("/c/Users/dana/src/app.py", cwd) == "C:\\Users\\dana\\src\\app.py"
    assert absolute("lib/x.py", cwd) == "C:\\Users\\dana\\src\\lib\\x.py"
    assert absolute("C:/Users/dana/src/y.py", cwd) == "C:\\Users\\dana\\src\\y.py"
    assert windows_path("/d", cwd) == "D:\\"
    assert absolute("/home/dana/a.py", "/home/dana") == "/home/dana/a.py"


def test_a_lone_surrogate_anywhere_in_a_payload_is_kept_as_its_escape() -> None:
    raw = (
        b'{"hook_event_name": "UserPromptSubmit", "prompt": "a \\ud83d b", "x\\udc00": ["\\ud800"]}'
    )
    found = parse_payload(raw, len(raw), [])
    assert found is not None
    payload, _ = found
    assert payload["prompt"] == "a \\ud83d b" and payload["x\\udc00"] == ["\\ud800"]
    json.dumps(payload).encode("utf-8")  # storable
    # a whole pair is a character, kept as it is
    assert escape_surrogates(json.loads('"\\ud83d\\ude80"')) == "\U0001f680"
    reading = claude_code.read(payload, {})
    assert [f.text for f in reading.facts if isinstance(f, Prompt)] == ["a \\ud83d b"]
