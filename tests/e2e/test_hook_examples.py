"""Every documented example payload, through `capture hook` as a real process: accepted (exit 0,
nothing on stderr, stdout only where the agent's protocol asks for it) and recorded as what it
is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    EXAMPLES,
    TOTALS_AFTER,
    count,
    example,
    example_text,
    hook,
    log_lines,
    make_workspace,
    no_agent_env,
    rows,
    wait_for_queue,
)

#: example payload -> the agent whose hook receives it
PAYLOADS = {
    "claude_code_posttooluse_bash.json": "claude-code",
    "claude_code_posttooluse_edit.json": "claude-code",
    "claude_code_posttooluse_write.json": "claude-code",
    "claude_code_posttoolusefailure_bash.json": "claude-code",
    "claude_code_pretooluse_edit.json": "claude-code",
    "claude_code_pretooluse_multiedit_legacy.json": "claude-code",
    "claude_code_sessionend.json": "claude-code",
    "claude_code_sessionstart.json": "claude-code",
    "claude_code_stop.json": "claude-code",
    "claude_code_userpromptsubmit.json": "claude-code",
    "codex_hook_posttooluse_bash.json": "codex",
    "codex_hook_pretooluse_apply_patch.json": "codex",
    "codex_hook_stop.json": "codex",
    "codex_hook_userpromptsubmit.json": "codex",
    "codex_notify_payload.json": "codex",
    "copilot_postToolUse_bash.json": "copilot",
    "copilot_preToolUse_edit.json": "copilot",
    "copilot_sessionEnd.json": "copilot",
    "cursor_afterFileEdit.json": "cursor",
    "cursor_afterShellExecution.json": "cursor",
    "cursor_afterTabFileEdit.json": "cursor",
    "cursor_beforeShellExecution.json": "cursor",
    "cursor_beforeSubmitPrompt.json": "cursor",
    "cursor_postToolUseFailure.json": "cursor",
    "cursor_postToolUse_shell.json": "cursor",
    "cursor_sessionEnd.json": "cursor",
    "cursor_stop.json": "cursor",
    "gemini_aftertool_replace.json": "gemini",
    "gemini_aftertool_run_shell_command.json": "gemini",
    "gemini_beforeagent.json": "gemini",
    "vscode_agent_posttooluse.json": "copilot",
}
#: examples that are not hook payloads: settings files (install tests), editor protocol messages
NOT_PAYLOADS = {
    "claude_code_settings_hooks.json",
    "codex_hooks_config.json",
    "copilot_hooks_config.json",
    "cursor_hooks_config.json",
    "gemini_settings_hooks.json",
    "lsp_didChangeWatchedFiles.json",
    "lsp_didChange_incremental.json",
    "lsp_initialize_positionEncoding.json",
    "lsp_inlineCompletion_exchange.json",
    "lsp_workspace_applyEdit.json",
    "vscode_TextDocumentChangeEvent_undo.json",
}


def test_every_json_example_is_classified() -> None:
    assert {p.name for p in EXAMPLES.glob("*.json")} == set(PAYLOADS) | NOT_PAYLOADS


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_example_is_accepted(
    name: str, tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    result = hook(run_capture, PAYLOADS[name], example_text(name, ws), cwd=ws)
    if name == "cursor_beforeSubmitPrompt.json":
        assert json.loads(result.stdout) == {"continue": True}
    else:
        assert result.stdout == ""
    (event,) = rows(capture_home, "SELECT kind, source, workspace, payload FROM events")
    assert event["source"] == f"hook:{PAYLOADS[name]}"
    assert json.loads(event["payload"]) == example(name, ws)
    assert event["workspace"] == str(ws)
    lines = log_lines(capture_home)
    if name == "vscode_agent_posttooluse.json":
        # names the edited file but not what changed: kept as an event, the gap logged
        assert len(lines) == 1 and "carries no edit content" in lines[0]
    else:
        assert lines == []


def proposals(home: Path) -> list[dict]:
    return [dict(r) for r in rows(home, "SELECT * FROM proposals ORDER BY id")]


def runs(home: Path) -> list[dict]:
    return [dict(r) for r in rows(home, "SELECT * FROM test_runs ORDER BY id")]


@pytest.mark.parametrize(
    ("name", "agent", "path", "tool", "new_text"),
    [
        (
            "claude_code_posttooluse_edit.json",
            "claude-code",
            "invoicer/totals.py",
            "Edit",
            '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)',
        ),
        (
            "cursor_afterFileEdit.json",
            "cursor",
            "invoicer/totals.py",
            "edit",
            '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)',
        ),
        ("cursor_afterTabFileEdit.json", "cursor", "invoicer/totals.py", "tab", "ROUND_HALF_UP"),
        (
            "gemini_aftertool_replace.json",
            "gemini",
            "invoicer/totals.py",
            "replace",
            '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n',
        ),
    ],
)
def test_applied_edits_become_tracked_proposals(
    name: str,
    agent: str,
    path: str,
    tool: str,
    new_text: str,
    tmp_path: Path,
    capture_home: Path,
    run_capture: RunCapture,
) -> None:
    ws = make_workspace(tmp_path)
    hook(run_capture, agent, example_text(name, ws), cwd=ws)
    (proposal,) = proposals(capture_home)
    assert (proposal["agent"], proposal["path"], proposal["tool"]) == (agent, path, tool)
    assert (proposal["state"], proposal["outcome"], proposal["source"]) == (
        "applied",
        "pending",
        "hook",
    )
    (hunk,) = rows(capture_home, "SELECT * FROM hunks")
    assert hunk["new_text"] == new_text
    assert hunk["status"] == "tracking"
    start, end = hunk["region_start"], hunk["region_end"]
    assert TOTALS_AFTER[start:end] == new_text
    # the region of a Tab completion is the one on the line it names, not the import's
    if tool == "tab":
        assert TOTALS_AFTER.count("\n", 0, start) == 4
    assert count(capture_home, "checkpoints") == 4


def test_claude_code_write_creates_a_file(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    hook(run_capture, "claude-code", example_text("claude_code_posttooluse_write.json", ws))
    (proposal,) = proposals(capture_home)
    assert proposal["path"] == "tests/test_totals.py"
    assert proposal["created_file"] == 1 and proposal["tool"] == "Write"
    assert proposal["lines_added"] == 7 and proposal["lines_removed"] == 0
    (episode,) = episodes_json(run_capture)
    assert episode["session_id"] == "8f1c2a40-5d7e-4b1a-9c33-2e6f0b7d9a11"


@pytest.mark.parametrize(
    ("name", "agent", "stop", "hunks"),
    [
        (
            "claude_code_pretooluse_edit.json",
            "claude-code",
            "claude_code_stop.json",
            1,
        ),
        (
            "claude_code_pretooluse_multiedit_legacy.json",
            "claude-code",
            "claude_code_sessionend.json",
            2,
        ),
        (
            "codex_hook_pretooluse_apply_patch.json",
            "codex",
            "codex_hook_stop.json",
            1,
        ),
        ("copilot_preToolUse_edit.json", "copilot", "copilot_sessionEnd.json", 0),
    ],
)
def test_announced_edit_without_result_is_rejected_when_the_turn_ends(
    name: str,
    agent: str,
    stop: str,
    hunks: int,
    tmp_path: Path,
    capture_home: Path,
    run_capture: RunCapture,
) -> None:
    ws = make_workspace(tmp_path)
    hook(run_capture, agent, example_text(name, ws), cwd=ws)
    assert proposals(capture_home) == []
    assert count(capture_home, "hook_pending") == 1
    hook(run_capture, agent, example_text(stop, ws), cwd=ws)
    (proposal,) = proposals(capture_home)
    assert (proposal["state"], proposal["outcome"], proposal["decided_by"]) == (
        "rejected",
        "rejected",
        "denied",
    )
    assert proposal["path"] == "invoicer/totals.py"
    assert count(capture_home, "hunks") == hunks
    assert count(capture_home, "hook_pending") == 0
    assert count(capture_home, "checkpoints") == 0


def test_codex_apply_patch_post_tool_use_is_applied(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    pre = example("codex_hook_pretooluse_apply_patch.json", ws)
    hook(run_capture, "codex", pre, cwd=ws)
    post = dict(pre, hook_event_name="PostToolUse", tool_response="Success. Updated files")
    hook(run_capture, "codex", post, cwd=ws)
    hook(run_capture, "codex", example_text("codex_hook_stop.json", ws), cwd=ws)
    (proposal,) = proposals(capture_home)
    assert (proposal["state"], proposal["tool"], proposal["path"]) == (
        "applied",
        "apply_patch",
        "invoicer/totals.py",
    )
    (hunk,) = rows(capture_home, "SELECT * FROM hunks")
    assert hunk["old_text"] == "    return round(subtotal * rate, 2)\n"
    assert hunk["status"] == "tracking"
    (episode,) = episodes_json(run_capture)
    assert episode["turn_id"] == "0198c7e2-55aa-7b10-8c21-3d4e5f607182"
    assert episode["ended_at"] is not None


@pytest.mark.parametrize(
    ("name", "agent", "command", "exit_code", "counts", "name_"),
    [
        (
            "claude_code_posttooluse_bash.json",
            "claude-code",
            "python -m pytest -q tests/test_totals.py",
            0,
            (2, 0),
            "pytest",
        ),
        (
            "claude_code_posttoolusefailure_bash.json",
            "claude-code",
            "python -m pytest -q",
            1,
            (2, 1),
            "pytest",
        ),
        (
            "cursor_afterShellExecution.json",
            "cursor",
            "python -m pytest -q",
            None,
            (2, 1),
            "pytest",
        ),
        ("cursor_postToolUse_shell.json", "cursor", "python -m pytest -q", 1, (2, 1), "pytest"),
        (
            "cursor_postToolUseFailure.json",
            "cursor",
            "npm run e2e",
            None,
            (None, None),
            "npm test (timeout)",
        ),
        (
            "codex_hook_posttooluse_bash.json",
            "codex",
            "python -m pytest -q",
            None,
            (2, 1),
            "pytest",
        ),
        (
            "gemini_aftertool_run_shell_command.json",
            "gemini",
            "python -m pytest -q",
            1,
            (2, 1),
            "pytest",
        ),
        ("copilot_postToolUse_bash.json", "copilot", "python -m pytest -q", None, (2, 1), "pytest"),
    ],
)
def test_shell_test_commands_become_test_runs(
    name: str,
    agent: str,
    command: str,
    exit_code: int | None,
    counts: tuple[int | None, int | None],
    name_: str,
    tmp_path: Path,
    capture_home: Path,
    run_capture: RunCapture,
) -> None:
    ws = make_workspace(tmp_path)
    hook(run_capture, agent, example_text(name, ws), cwd=ws)
    (run,) = runs(capture_home)
    assert (run["command"], run["exit_code"], run["name"], run["source"]) == (
        command,
        exit_code,
        name_,
        "hook",
    )
    assert (run["passed"], run["failed"]) == counts
    if counts[1]:
        assert json.loads(run["failing_ids"]) in (
            ["tests/test_totals.py::test_tax_rounds_half_up"],
            [],
        )
    assert run["cwd"] == str(ws)
    # a re-sent payload records nothing twice
    hook(run_capture, agent, example_text(name, ws), cwd=ws)
    assert len(runs(capture_home)) == 1


def test_a_command_that_runs_no_tests_is_only_an_event(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    payload = example("claude_code_posttooluse_bash.json", ws)
    payload["tool_input"]["command"] = "ls -la && git status"
    hook(run_capture, "claude-code", payload, cwd=ws)
    assert runs(capture_home) == []
    assert count(capture_home, "events") == 1


def test_prompts_open_episodes_with_their_text(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    hook(run_capture, "gemini", example_text("gemini_beforeagent.json", ws))
    hook(run_capture, "cursor", example_text("cursor_beforeSubmitPrompt.json", ws))
    hook(run_capture, "codex", example_text("codex_hook_userpromptsubmit.json", ws))
    hook(run_capture, "claude-code", example_text("claude_code_userpromptsubmit.json", ws))
    episodes = {e["agent"]: e for e in episodes_json(run_capture)}
    assert set(episodes) == {"gemini", "cursor", "codex", "claude-code"}
    assert all(e["prompt"].startswith("tax() rounds 10.05*0.5") for e in episodes.values())
    assert episodes["cursor"]["turn_id"] == "a41d7b02-93ce-4e15-b8f7-2c6d0e9f3a17"
    assert episodes["cursor"]["session_id"] == "c0f3a9e1-6b2d-4f8a-9e51-7d2c4b8a1e90"
    assert episodes["codex"]["turn_id"] == "0198c7e2-55aa-7b10-8c21-3d4e5f607182"


def test_codex_notify_passes_the_payload_as_the_last_argument(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    text = example_text("codex_notify_payload.json", ws)
    result = run_capture("hook", "codex", text, input=b"", cwd=ws)
    wait_for_queue(capture_home)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    (episode,) = episodes_json(run_capture)
    assert episode["agent"] == "codex"
    assert episode["session_id"] == "0198c7e2-4a1b-7c3d-9e0f-1a2b3c4d5e6f"
    assert episode["turn_id"] == "0198c7e2-55aa-7b10-8c21-3d4e5f607182"
    assert episode["prompt"] == "tax() rounds 10.05*0.5 down to 5.02; make it round half-up"
    assert episode["ended_at"] is not None
    assert log_lines(capture_home) == []


def test_session_start_names_the_model_of_later_episodes(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    hook(run_capture, "claude-code", example_text("claude_code_sessionstart.json", ws))
    hook(run_capture, "claude-code", example_text("claude_code_posttooluse_edit.json", ws))
    (episode,) = episodes_json(run_capture)
    assert episode["model"] == "claude-sonnet-5"
    assert episode["proposals"][0]["model"] == "claude-sonnet-5"
