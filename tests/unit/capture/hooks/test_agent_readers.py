"""The pure payload readers: tolerant of old and new field names, missing fields and shapes
that changed between agent versions."""

from __future__ import annotations

from typing import Any

from capture.hooks.agents import read_payload
from capture.hooks.agents.facts import Command, Edit, Prompt, Stage, TurnEnd
from capture.hooks.payloads import reply_for
from capture.model import HunkInput


def read(agent: str, payload: dict[str, Any], event: str | None = None, **env: str) -> Any:
    return read_payload(agent, payload, env, event)


def only(reading: Any, kind: type) -> Any:
    (fact,) = reading.facts
    assert isinstance(fact, kind)
    return fact


def test_claude_edit_replace_all_uses_the_structured_patch() -> None:
    payload = {
        "hook_event_name": "PostToolUse",
        "session_id": "s",
        "cwd": "/w",
        "tool_name": "Edit",
        "tool_use_id": "t1",
        "tool_input": {
            "file_path": "/w/a.py",
            "old_string": "x",
            "new_string": "y",
            "replace_all": True,
        },
        "tool_response": {
            "structuredPatch": [
                {"newStart": 1, "lines": ["-x = x", "+y = y"]},
                {"newStart": 9, "lines": ["-print(x)", "+print(y)"]},
            ]
        },
    }
    edit = only(read("claude-code", payload), Edit)
    assert edit.stage is Stage.APPLIED and edit.key == "claude-code:t1:/w/a.py"
    assert edit.hunks == [
        HunkInput("x = x\n", "y = y\n", line=1),
        HunkInput("print(x)\n", "print(y)\n", line=9),
    ]


def test_claude_write_without_details_is_vague() -> None:
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_use_id": "t",
        "tool_input": {"file_path": "rel/a.py", "content": "new\n"},
        "tool_response": {"filePath": "/w/rel/a.py", "success": True},
        "cwd": "/w",
    }
    edit = only(read("claude-code", payload), Edit)
    assert edit.path == "/w/rel/a.py"
    assert edit.vague and edit.written == "new\n" and not edit.created_file


def test_claude_bash_shapes() -> None:
    base = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "b"}
    ok = only(
        read(
            "claude-code",
            {
                **base,
                "tool_input": {"command": "pytest"},
                "tool_response": {"stdout": "1 passed in 0.1s"},
            },
        ),
        Command,
    )
    assert (ok.exit_code, ok.output, ok.failure) == (0, "1 passed in 0.1s", None)
    # the 2025 SDK shape: output and exitCode
    old = only(
        read(
            "claude-code",
            {
                **base,
                "tool_input": {"command": "pytest"},
                "tool_response": {"output": "x", "exitCode": 3},
            },
        ),
        Command,
    )
    assert old.exit_code == 3
    interrupted = only(
        read(
            "claude-code",
            {
                **base,
                "tool_input": {"command": "pytest"},
                "tool_response": {"stdout": "", "interrupted": True},
            },
        ),
        Command,
    )
    assert (interrupted.exit_code, interrupted.failure) == (None, "interrupted")
    background = read(
        "claude-code", {**base, "tool_input": {"command": "pytest", "run_in_background": True}}
    )
    assert background.facts == []
    never = only(
        read(
            "claude-code",
            {
                **base,
                "hook_event_name": "PostToolUseFailure",
                "tool_input": {"command": "pytest"},
                "error": "spawn failed",
            },
        ),
        Command,
    )
    assert (never.exit_code, never.failure) == (None, "did not start")


def test_claude_failed_edit_and_missing_event() -> None:
    payload = {
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Edit",
        "tool_use_id": "e",
        "tool_input": {"file_path": "/w/a.py", "old_string": "a", "new_string": "b"},
        "error": "String to replace not found",
    }
    edit = only(read("claude-code", payload), Edit)
    assert edit.stage is Stage.FAILED and edit.error == "String to replace not found"
    reading = read("claude-code", {"session_id": "s"})
    assert reading.facts == [] and "not a Claude Code hook payload" in reading.problems[0]


def test_claude_project_dir_is_a_root() -> None:
    reading = read("claude-code", {"hook_event_name": "Stop"}, CLAUDE_PROJECT_DIR="/p")
    assert reading.call.roots == ("/p",)
    assert only(reading, TurnEnd).session is False


def test_cursor_shell_exit_code_from_tool_output() -> None:
    payload = {
        "hook_event_name": "postToolUse",
        "tool_name": "Shell",
        "generation_id": "g",
        "tool_input": {"command": "go test ./..."},
        "tool_use_id": "u",
        "tool_output": '{"exitCode": 2, "stdout": "FAIL", "stderr": " x"}',
    }
    command = only(read("cursor", payload), Command)
    assert (command.exit_code, command.output) == (2, "FAIL x")
    after = {
        "hook_event_name": "afterShellExecution",
        "generation_id": "g",
        "command": "go test ./...",
        "output": "FAIL x\n",
    }
    # both reports of one run share a key, so the run is recorded once
    assert only(read("cursor", after), Command).key == command.key


def test_cursor_older_attachment_and_edit_spellings() -> None:
    payload = {
        "hook_event_name": "afterFileEdit",
        "generation_id": "g",
        "file_path": "/w/a.py",
        "edits": [{"oldString": "a", "newString": "b"}, "junk", {"old_string": "c"}],
    }
    edit = only(read("cursor", payload), Edit)
    assert edit.hunks == [HunkInput("a", "b"), HunkInput("c", "")]
    prompt = read("cursor", {"hook_event_name": "beforeSubmitPrompt", "prompt": "p"})
    assert reply_for("cursor", prompt.call.event, b"") == '{"continue": true}'


def test_codex_commands_and_notify() -> None:
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "turn_id": "t",
        "tool_input": {"command": ["bash", "-lc", "cargo test"]},
        "tool_response": "Process exited with code 101\nOutput:\ntest result: FAILED. "
        "1 passed; 1 failed; 0 ignored",
    }
    command = only(read("codex", payload), Command)
    assert (command.command, command.exit_code) == ("cargo test", 101)
    notify = read(
        "codex",
        {
            "type": "agent-turn-complete",
            "thread-id": "th",
            "turn-id": "tu",
            "input-messages": ["a", "b"],
        },
    )
    assert (notify.call.event, notify.call.session_id, notify.call.turn_id) == (
        "notify",
        "th",
        "tu",
    )
    prompt, end = notify.facts
    assert isinstance(prompt, Prompt) and prompt.text == "a\n\nb" and isinstance(end, TurnEnd)


def test_codex_patch_deletions_are_reported() -> None:
    patch = "*** Begin Patch\n*** Delete File: old.py\n*** End Patch\n"
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch",
        "cwd": "/w",
        "tool_use_id": "c",
        "tool_input": {"command": patch},
    }
    reading = read("codex", payload)
    assert reading.facts == [] and reading.problems == ["/w/old.py: file deletion is not tracked"]


def test_gemini_write_file_and_failures() -> None:
    payload = {
        "hook_event_name": "AfterTool",
        "tool_name": "write_file",
        "cwd": "/w",
        "session_id": "s",
        "tool_input": {"file_path": "/w/n.py", "content": "x\n"},
        "tool_response": {"llmContent": "ok", "returnDisplay": {"originalContent": None}},
    }
    edit = only(read("gemini", payload), Edit)
    assert edit.created_file and edit.hunks == [HunkInput("", "x\n", start=0)]
    failed = dict(payload, tool_response={"llmContent": "", "error": "permission denied"})
    assert only(read("gemini", failed), Edit).stage is Stage.FAILED
    before = dict(payload, hook_event_name="BeforeTool", tool_response=None)
    # Before and After name one call alike: the pending record is settled by the After
    assert only(read("gemini", before), Edit).key == edit.key


def test_copilot_event_is_inferred_or_given() -> None:
    post = {
        "cwd": "/w",
        "toolName": "edit",
        "toolArgs": '{"path": "a.py", "old_str": "a", "new_str": "b"}',
        "toolResult": {"resultType": "denied", "textResultForLlm": "denied by user"},
    }
    edit = only(read("copilot", post), Edit)
    assert (edit.stage, edit.path, edit.hunks) == (Stage.FAILED, "/w/a.py", [HunkInput("a", "b")])
    pre = {k: v for k, v in post.items() if k != "toolResult"}
    assert read("copilot", pre).call.event == "preToolUse"
    assert only(read("copilot", pre), Edit).key == edit.key
    assert read("copilot", {"cwd": "/w", "reason": "complete"}).call.event == "sessionEnd"
    assert read("copilot", {"cwd": "/w"}, event="sessionEnd").call.event == "sessionEnd"
    vscode = {"hookEventName": "UserPromptSubmit", "sessionId": "v", "prompt": "hi"}
    reading = read("copilot", vscode)
    assert (reading.call.event, reading.call.session_id) == ("userPromptSubmitted", "v")


def test_claude_post_tool_batch_names_a_denied_edit_with_its_denial() -> None:
    # Claude Code 2.1.197, an Edit denied in -p mode: the batch is the only event after the
    # PreToolUse, and its result is the denial's text; a Write that ran is text too
    denial = (
        "Claude requested permissions to write to /w/README.md, but you haven't granted it yet."
    )
    payload = {
        "hook_event_name": "PostToolBatch",
        "session_id": "s",
        "prompt_id": "p",
        "cwd": "/w",
        "tool_calls": [
            {
                "tool_name": "Edit",
                "tool_input": {
                    "replace_all": False,
                    "file_path": "/w/README.md",
                    "old_string": "# demo",
                    "new_string": "# demo (edited)",
                },
                "tool_use_id": "toolu_1",
                "tool_response": denial,
            },
            {
                "tool_name": "Read",
                "tool_input": {"file_path": "/w/README.md"},
                "tool_use_id": "toolu_0",
                "tool_response": "1\t# demo",
            },
        ],
    }
    (edit,) = [f for f in read("claude-code", payload).facts if isinstance(f, Edit)]
    assert (edit.stage, edit.denied, edit.error) == (Stage.FAILED, True, denial)
    assert edit.key == "claude-code:toolu_1:/w/README.md"  # the PreToolUse's key
    assert edit.hunks == [HunkInput("# demo", "# demo (edited)")]


def test_codex_patch_through_its_shell_is_announced_as_an_edit() -> None:
    # Codex 0.171: the patch goes through exec_command as a heredoc; only this PreToolUse fires
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "turn_id": "t",
        "cwd": "/w",
        "tool_name": "Bash",
        "tool_input": {
            "command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: calc.py\n"
            "+def add(a, b):\n+    return a + b\n*** End Patch\nEOF\n"
        },
        "tool_use_id": "call_1",
    }
    edit = only(read("codex", payload), Edit)
    assert (edit.path, edit.stage, edit.created_file) == ("/w/calc.py", Stage.PROPOSED, True)
    assert edit.key == "codex:shell:call_1:/w/calc.py"
    assert edit.hunks[0].new_text == "def add(a, b):\n    return a + b\n"
    # an ordinary command is no edit
    payload["tool_input"] = {"command": "cat <<'EOF' > notes\nhi\nEOF\n"}
    assert not [f for f in read("codex", payload).facts if isinstance(f, Edit)]


def test_a_cursor_prompt_event_spelled_with_escapes_still_gets_its_reply() -> None:
    raw = b'{"hook_event_name": "before\\u0053ubmitPrompt", "prompt": "hi"}'
    assert reply_for("cursor", None, raw) == '{"continue": true}'
    other = b'{"hook_event_name": "after\\u0046ileEdit"}'
    assert reply_for("cursor", None, other) is None
    assert reply_for("cursor", None, b'{"hook_event_name": "\\u00') is None  # not JSON
