"""Each format generation the corpus showed wrongly read, through the real CLI: Claude Code
1.0.x's MultiEdit with `originalFileContents` (a replacement text that occurs twice), a Write
the agent edits again in the same turn, a failed 1.0.5x test run with no "Exit code" line, a
bare Codex rollout with apply_patch run through the shell, a lone surrogate in a hook payload.
The lines are hand-made in the shape each generation wrote (the real files are in
tests/fixtures/real)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import count, hook, log_lines, no_agent_env, rows  # noqa: F401

ORIGINAL = "def a():\n    return 1\n\n\ndef b():\n    return 3\n"
AFTER = "def a():\n    return 2\n\n\ndef b():\n    return 2\n"
EDITS = [
    {"old_string": "return 1", "new_string": "return 2", "replace_all": False},
    {"old_string": "return 3", "new_string": "return 2", "replace_all": False},
]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _call(
    ws: Path, n: int, name: str, tool_input: dict[str, Any], result: Any, text: str, error: bool
) -> list[dict[str, Any]]:
    common = {"sessionId": "s1", "cwd": str(ws), "version": "1.0.57"}
    return [
        {
            **common,
            "type": "assistant",
            "timestamp": f"2025-07-22T08:00:{2 * n:02d}Z",
            "message": {
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": [{"type": "tool_use", "id": f"t{n}", "name": name, "input": tool_input}],
            },
        },
        {
            **common,
            "type": "user",
            "timestamp": f"2025-07-22T08:00:{2 * n + 1:02d}Z",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{n}",
                        "content": text,
                        "is_error": error,
                    }
                ],
            },
            "toolUseResult": result,
        },
    ]


def _prompt(ws: Path, text: str) -> dict[str, Any]:
    return {
        "sessionId": "s1",
        "cwd": str(ws),
        "version": "1.0.57",
        "type": "user",
        "uuid": "p1",
        "timestamp": "2025-07-22T08:00:00Z",
        "message": {"role": "user", "content": text},
    }


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / ".git").mkdir(parents=True)
    return ws.resolve()


def test_claude_code_1_0_multiedit_and_a_write_edited_in_the_same_turn(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = _ws(tmp_path)
    m, new = ws / "m.py", ws / "new.py"
    written = "".join(f"line {i}\n" for i in range(30))
    final = written.replace("line 12\n", "line twelve\n")
    m.write_text(AFTER)
    new.write_text(final)
    records = [
        _prompt(ws, "make both return 2, and add new.py"),
        *_call(
            ws,
            1,
            "MultiEdit",
            {"file_path": str(m), "edits": EDITS},
            {"filePath": str(m), "edits": EDITS, "originalFileContents": ORIGINAL},
            "Applied 2 edits",
            False,
        ),
        *_call(
            ws,
            2,
            "Write",
            {"file_path": str(new), "content": written},
            {"type": "create", "filePath": str(new), "content": written, "structuredPatch": []},
            "File created",
            False,
        ),
        *_call(
            ws,
            3,
            "Edit",
            {"file_path": str(new), "old_string": "line 12\n", "new_string": "line twelve\n"},
            {
                "filePath": str(new),
                "oldString": "line 12\n",
                "newString": "line twelve\n",
                "originalFile": written,
            },
            "ok",
            False,
        ),
    ]
    path = _write(tmp_path / "history" / "s1.jsonl", records)
    result = run_capture("import", "claude-code", str(path), cwd=ws)
    assert "3 proposal(s) (0 rejected)" in result.stdout, result.stdout
    (episode,) = episodes_json(run_capture)
    outcomes = {(p["file"], p["tool"]): p["outcome"] for p in episode["proposals"]}
    assert outcomes == {
        ("m.py", "MultiEdit"): "kept",
        # the whole file the Write made, changed by one line since: measured, not lost
        ("new.py", "Write"): "kept",
        ("new.py", "Edit"): "kept",
    }
    multi = next(p for p in episode["proposals"] if p["tool"] == "MultiEdit")
    # worked out between the file before and after: each replacement at its own place
    assert [(h["old_text"], h["new_text"]) for h in multi["hunks"]] == [("1", "2"), ("3", "2")]


def test_a_failed_test_run_without_an_exit_code_line(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = _ws(tmp_path)
    (ws / "m.py").write_text(AFTER)
    output = (
        "....F\n=================================== FAILURES ===================================\n"
        "___________________________________ test_b ___________________________________\n"
        "FAILED tests/test_m.py::test_b - assert 2 == 3\n"
        "========================= 1 failed, 4 passed in 0.12s ========================="
    )
    records = [
        _prompt(ws, "run the tests"),
        *_call(
            ws,
            1,
            "Edit",
            {"file_path": str(ws / "m.py"), "old_string": "return 1", "new_string": "return 2"},
            {
                "filePath": str(ws / "m.py"),
                "oldString": "return 1",
                "newString": "return 2",
                "originalFile": ORIGINAL.replace("return 3", "return 2"),
            },
            "ok",
            False,
        ),
        *_call(ws, 2, "Bash", {"command": "python -m pytest -q"}, "Error: " + output, output, True),
    ]
    path = _write(tmp_path / "history" / "s1.jsonl", records)
    run_capture("import", "claude-code", str(path), cwd=ws, check=True)
    (run,) = rows(capture_home, "SELECT name, exit_code, passed, failed FROM test_runs")
    assert run["name"] == "pytest"  # not "pytest (did not start)"
    assert (run["exit_code"], run["passed"], run["failed"]) == (None, 4, 1)


PATCH = "*** Begin Patch\n*** Update File: m.py\n@@\n-    return 1\n+    return 2\n*** End Patch\n"


def test_a_bare_codex_rollout_with_apply_patch_through_the_shell(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = _ws(tmp_path)
    (ws / "m.py").write_text(ORIGINAL.replace("return 1", "return 2"))
    context = f"<environment_context>\n  <cwd>{ws}</cwd>\n</environment_context>"
    records = [
        {"id": "0a1b2c", "timestamp": "2025-05-20T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": context}]},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "a returns 2"}],
        },
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["apply_patch", PATCH], "workdir": str(ws)}),
            "call_id": "c1",
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": "Done!", "metadata": {"exit_code": 0}}),
        },
        {"record_type": "state"},
    ]
    path = _write(tmp_path / "sessions" / "rollout-2025-05-20T10-00-00-0a1b2c.jsonl", records)
    result = run_capture("import", "codex", str(path), cwd=ws, check=True)
    assert "1 proposal(s)" in result.stdout and "0 unreadable line(s)" in result.stdout
    (episode,) = episodes_json(run_capture)
    assert episode["prompt"] == "a returns 2"
    (proposal,) = episode["proposals"]
    assert (proposal["file"], proposal["tool"], proposal["outcome"]) == (
        "m.py",
        "apply_patch",
        "kept",
    )


def test_a_lone_surrogate_in_a_hook_payload_is_recorded_escaped(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = _ws(tmp_path)
    fields = {"session_id": "s9", "transcript_path": "/x.jsonl", "cwd": str(ws)}
    # JSON text, not a Python string: the escape of a lone high surrogate, with no pair
    body = json.dumps({**fields, "hook_event_name": "UserPromptSubmit", "prompt": "@"})
    body = body.replace('"@"', '"fix \\ud83d the emoji"')
    hook(run_capture, "claude-code", body, cwd=ws)
    (episode,) = episodes_json(run_capture)
    assert episode["prompt"] == "fix \\ud83d the emoji"
    assert not [line for line in log_lines(capture_home) if "internal error" in line]
    assert count(capture_home, "events") >= 1


def test_capture_import_hooks_bad_input(tmp_path: Path, run_capture: RunCapture) -> None:
    missing = run_capture("import", "hooks", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode != 0 and len(missing.stderr.strip().splitlines()) == 1
    assert "no such file or directory" in missing.stderr
    unknown = run_capture("import", "hooks", str(tmp_path), "--agent", "nope", cwd=tmp_path)
    assert unknown.returncode != 0 and "unknown agent 'nope'" in unknown.stderr
    bare = run_capture("import", "hooks", cwd=tmp_path)
    assert bare.returncode != 0 and len(bare.stderr.strip().splitlines()) == 1
