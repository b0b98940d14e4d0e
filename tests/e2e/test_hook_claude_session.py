"""A scripted Claude Code session through `capture hook claude-code`, one process per hook call
as Claude Code runs them: the episode, its proposals, the rejection, the failed test run, and
the outcomes measured by later hook calls alone (no editor, no `capture observe`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    TEST_TOTALS,
    TOTALS_AFTER,
    TOTALS_BEFORE,
    count,
    hook,
    log_lines,
    no_agent_env,
)

SESSION = "8f1c2a40-5d7e-4b1a-9c33-2e6f0b7d9a11"
PROMPT_ID = "2b9e6c1d-7f40-4e0a-8d52-91a3c0f4e7b8"
PROMPT = "tax() rounds 10.05*0.5 down to 5.02; make it round half-up and add a test"
OLD_LINE = "    return round(subtotal * rate, 2)"
NEW_LINE = '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)'
#: the final window must come after the scripted session is over (hook calls observe the due
#: checkpoints, so an earlier final window would be measured before the user's revert)
FINAL_WINDOW = 10.0
WINDOWS = {"CAPTURE_WINDOWS": f"1s,2s,{FINAL_WINDOW:g}s"}


def base(ws: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "prompt_id": PROMPT_ID,
        "transcript_path": str(ws.parent / f"{SESSION}.jsonl"),
        "cwd": str(ws),
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


def edit_input(path: Path) -> dict[str, Any]:
    return {"file_path": str(path), "old_string": OLD_LINE, "new_string": NEW_LINE}


def test_scripted_session(tmp_path: Path, capture_home: Path, run_capture: RunCapture) -> None:
    ws = tmp_path / "invoicer"
    (ws / "invoicer").mkdir(parents=True)
    (ws / ".git").mkdir()
    totals = ws / "invoicer" / "totals.py"
    totals.write_text(TOTALS_BEFORE)
    test_file = ws / "tests" / "test_totals.py"

    def send(event: str, **fields: Any) -> None:
        hook(run_capture, "claude-code", base(ws, event, **fields), cwd=ws, env=WINDOWS)

    send("UserPromptSubmit", prompt=PROMPT)

    # Edit: announced, written by the agent, reported with its structured patch
    send("PreToolUse", tool_name="Edit", tool_input=edit_input(totals), tool_use_id="toolu_edit")
    totals.write_text(TOTALS_AFTER)
    edit_response = {
        "filePath": str(totals),
        "oldString": OLD_LINE,
        "newString": NEW_LINE,
        "originalFile": TOTALS_BEFORE,
        "structuredPatch": [
            {
                "oldStart": 4,
                "oldLines": 2,
                "newStart": 4,
                "newLines": 2,
                "lines": [" def tax(subtotal, rate):", "-" + OLD_LINE, "+" + NEW_LINE],
            }
        ],
        "userModified": False,
        "replaceAll": False,
    }
    post_edit = {
        "tool_name": "Edit",
        "tool_input": edit_input(totals),
        "tool_response": edit_response,
        "tool_use_id": "toolu_edit",
    }
    send("PostToolUse", **post_edit)
    edited_at = time.time()

    # Write: a new test file
    write_input = {"file_path": str(test_file), "content": TEST_TOTALS}
    send("PreToolUse", tool_name="Write", tool_input=write_input, tool_use_id="toolu_write")
    test_file.parent.mkdir()
    test_file.write_text(TEST_TOTALS)
    send(
        "PostToolUse",
        tool_name="Write",
        tool_input=write_input,
        tool_response={
            "type": "create",
            "filePath": str(test_file),
            "content": TEST_TOTALS,
            "structuredPatch": [],
            "originalFile": None,
        },
        tool_use_id="toolu_write",
    )
    written_at = time.time()

    # An edit the user denies at the permission prompt: PreToolUse, and nothing after it
    denied_input = {
        "file_path": str(totals),
        "old_string": "def tax(subtotal, rate):",
        "new_string": "def tax(subtotal: Decimal, rate: Decimal) -> Decimal:",
    }
    send("PreToolUse", tool_name="Edit", tool_input=denied_input, tool_use_id="toolu_denied")

    # A failing pytest through Bash
    send(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "python -m pytest -q", "description": "Run the tests"},
        tool_use_id="toolu_bash",
        error="Exit code 1\n.F.   [100%]\nFAILED tests/test_totals.py::test_tax_rounds_half_up"
        " - AssertionError\n1 failed, 2 passed in 0.11s",
        is_interrupt=False,
        duration_ms=40,
    )
    send("Stop", stop_hook_active=False, last_assistant_message="Done.")

    # A re-sent payload records nothing twice
    send("PostToolUse", **post_edit)

    (episode,) = episodes_json(run_capture)
    assert (episode["agent"], episode["session_id"], episode["turn_id"]) == (
        "claude-code",
        SESSION,
        PROMPT_ID,
    )
    assert episode["prompt"] == PROMPT
    assert episode["ended_at"] is not None
    by_tool = {p["tool"] + ":" + p["state"]: p for p in episode["proposals"]}
    assert set(by_tool) == {"Edit:applied", "Write:applied", "Edit:rejected"}
    edit, write, denied = (
        by_tool["Edit:applied"],
        by_tool["Write:applied"],
        by_tool["Edit:rejected"],
    )
    assert edit["file"] == "invoicer/totals.py"
    assert [(h["old_text"], h["new_text"], h["status"]) for h in edit["hunks"]] == [
        (OLD_LINE, NEW_LINE, "tracking")
    ]
    assert write["file"] == "tests/test_totals.py" and write["created_file"] is True
    assert denied["outcome"] == "rejected" and denied["decided_by"] == "denied"
    assert [h["new_text"] for h in denied["hunks"]] == [denied_input["new_string"]]
    (run,) = episode["test_runs"]
    assert (run["command"], run["exit_code"], run["passed"], run["failed"]) == (
        "python -m pytest -q",
        1,
        2,
        1,
    )
    assert run["failing_ids"] == ["tests/test_totals.py::test_tax_rounds_half_up"]
    assert count(capture_home, "proposals") == 3
    assert count(capture_home, "test_runs") == 1
    assert count(capture_home, "events") == 9

    # The user reverts the agent's edit on disk; no editor runs. Once the windows
    # have passed, the next hook call measures the outcomes.
    totals.write_text(TOTALS_BEFORE)
    assert time.time() < edited_at + FINAL_WINDOW, "the session outlasted the final window"
    time.sleep(max(0.0, written_at + FINAL_WINDOW + 0.2 - time.time()))
    send("SessionEnd", reason="prompt_input_exit")

    (episode,) = episodes_json(run_capture)
    outcomes = {p["tool"] + ":" + p["state"]: p["outcome"] for p in episode["proposals"]}
    assert outcomes == {
        "Edit:applied": "undone",
        "Write:applied": "kept",
        "Edit:rejected": "rejected",
    }
    assert episode["settled_at"] is not None
    edit = next(p for p in episode["proposals"] if p["tool"] == "Edit" and p["state"] == "applied")
    # read on disk by the hook calls: `disk-late` where a busy machine delayed the read
    # past its due time by more than the tolerance, with the delay
    windows = [c for c in edit["checkpoints"] if c["window"] != "late"]
    assert [c["via"] for c in windows] == [
        "disk" if c["late_seconds"] is None else "disk-late" for c in windows
    ]
    assert log_lines(capture_home) == []
