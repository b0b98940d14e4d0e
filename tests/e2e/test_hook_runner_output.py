"""Real runners' output reaching `capture hook claude-code` through the agent's Bash tool: the
recorded runs carry the counts the output gives, null where it gives none, and a version
query is no test run. One process per hook call, as Claude Code runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import ROOT, RunCapture, episodes_json
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    TOTALS_AFTER,
    TOTALS_BEFORE,
    count,
    hook,
    no_agent_env,
)

OUTPUT = ROOT / "tests" / "fixtures" / "runner-output"
SESSION = "5b0e9d2c-1a7f-4c3e-8d60-7f2a9b4c1e05"
PROMPT_ID = "c4a1f0e9-2d3b-4e58-9a71-0b6d5e8f3c22"
OLD_LINE = "    return round(subtotal * rate, 2)"
NEW_LINE = '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)'


def _payload(ws: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "prompt_id": PROMPT_ID,
        "transcript_path": str(ws.parent / f"{SESSION}.jsonl"),
        "cwd": str(ws),
        "permission_mode": "acceptEdits",
        "hook_event_name": event,
        **fields,
    }


def _bash(command: str, stdout: str, use_id: str) -> dict[str, Any]:
    return {
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run the tests"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False},
        "tool_use_id": use_id,
        "duration_ms": 900,
    }


def test_runner_output_through_the_agents_shell(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = tmp_path / "invoicer"
    (ws / "invoicer").mkdir(parents=True)
    (ws / ".git").mkdir()
    totals = ws / "invoicer" / "totals.py"
    totals.write_text(TOTALS_BEFORE)

    def send(event: str, **fields: Any) -> None:
        hook(run_capture, "claude-code", _payload(ws, event, **fields), cwd=ws)

    send("UserPromptSubmit", prompt="round half-up")
    edit = {"file_path": str(totals), "old_string": OLD_LINE, "new_string": NEW_LINE}
    send("PreToolUse", tool_name="Edit", tool_input=edit, tool_use_id="toolu_edit")
    totals.write_text(TOTALS_AFTER)
    response = {
        "filePath": str(totals),
        "oldString": OLD_LINE,
        "newString": NEW_LINE,
        "originalFile": TOTALS_BEFORE,
        "structuredPatch": [],
        "userModified": False,
        "replaceAll": False,
    }
    send(
        "PostToolUse",
        tool_name="Edit",
        tool_input=edit,
        tool_response=response,
        tool_use_id="toolu_edit",
    )

    # `go test ./calc` said only "ok": it passed, how many tests ran is not known
    go_ok = (OUTPUT / "go" / "ok-only.plain.txt").read_text()
    send("PostToolUse", **_bash("go test ./calc", go_ok, "toolu_go"))
    # a version query prints a version, runs no test
    send("PostToolUse", **_bash("npx vitest --version", "vitest/4.1.12 linux-x64\n", "toolu_v"))
    # `mix test` failed; Claude Code reports the exit code in the error's first line
    mix = (OUTPUT / "mix" / "run.plain.txt").read_text()
    send(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "mix test", "description": "Run the tests"},
        tool_use_id="toolu_mix",
        error=f"Exit code 2\n{mix}",
        is_interrupt=False,
        duration_ms=1200,
    )
    send("Stop", stop_hook_active=False, last_assistant_message="Done.")

    assert count(capture_home, "test_runs") == 2
    (episode,) = episodes_json(run_capture)
    runs = {run["command"]: run for run in episode["test_runs"]}
    assert set(runs) == {"go test ./calc", "mix test"}
    keys = ("exit_code", "passed", "failed", "errors", "skipped", "failing_ids")
    assert [runs["go test ./calc"][k] for k in keys] == [0, None, 0, 0, None, []]
    assert [runs["mix test"][k] for k in keys] == [2, 3, 1, 0, 1, ["test divides (CalcTest)"]]
