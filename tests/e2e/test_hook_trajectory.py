"""A live Claude Code session through `capture install` and `capture hook claude-code`, one
process per hook call, with the payloads Claude Code 2.x sends (Read and Grep included): the
reads are recorded in order with their results, the edit keeps the file as it found it, and a
"continue" turn answers the request before it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import zstandard

from tests.conftest import RunCapture
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    TOTALS_AFTER,
    TOTALS_BEFORE,
    hook,
    no_agent_env,
    rows,
)

SESSION = "0d7c9a51-3e2b-4f6a-8c1d-5b4e2a9f7c30"
PROMPT = "tax() rounds half-down; make it round half-up"


def _text(home: Path, digest: str | None) -> str | None:
    if digest is None:
        return None
    (row,) = rows(home, "SELECT codec, body FROM texts WHERE hash = ?", digest)
    body = bytes(row["body"])
    if row["codec"] == "zstd":
        body = zstandard.ZstdDecompressor().decompress(body)
    return body.decode()


def test_a_live_session_records_what_the_agent_read(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = tmp_path / "invoicer"
    (ws / "invoicer").mkdir(parents=True)
    (ws / ".git").mkdir()
    totals = ws / "invoicer" / "totals.py"
    totals.write_text(TOTALS_BEFORE)
    installed = run_capture("install", "claude-code", cwd=ws)
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((ws / ".claude" / "settings.local.json").read_text())
    # the result of every tool comes to the hook, not only the edits and the shell's
    (group,) = settings["hooks"]["PostToolUse"]
    assert group.get("matcher") in (None, "", "*")

    def send(event: str, **fields: Any) -> None:
        payload = {
            "session_id": SESSION,
            "transcript_path": str(tmp_path / f"{SESSION}.jsonl"),
            "cwd": str(ws),
            "permission_mode": "default",
            "hook_event_name": event,
            **fields,
        }
        hook(run_capture, "claude-code", payload, cwd=ws)

    grep_out = "invoicer/totals.py:5:    return round(subtotal * rate, 2)"
    send("UserPromptSubmit", prompt=PROMPT)
    send(
        "PostToolUse",
        tool_name="Grep",
        tool_input={"pattern": "round\\(", "output_mode": "content", "-n": True},
        tool_response={
            "mode": "content",
            "numFiles": 0,
            "filenames": [],
            "content": grep_out,
            "numLines": 1,
        },
        tool_use_id="toolu_grep",
    )
    send(
        "PostToolUse",
        tool_name="Read",
        tool_input={"file_path": str(totals)},
        tool_response={
            "type": "text",
            "file": {
                "filePath": str(totals),
                "content": TOTALS_BEFORE,
                "numLines": len(TOTALS_BEFORE.splitlines()),
                "startLine": 1,
                "totalLines": len(TOTALS_BEFORE.splitlines()),
            },
        },
        tool_use_id="toolu_read",
    )
    old = next(line for line in TOTALS_BEFORE.splitlines() if "round(" in line)
    new = next(line for line in TOTALS_AFTER.splitlines() if line not in TOTALS_BEFORE)
    totals.write_text(TOTALS_AFTER)
    send(
        "PostToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(totals), "old_string": old, "new_string": new},
        tool_response={
            "filePath": str(totals),
            "oldString": old,
            "newString": new,
            "originalFile": TOTALS_BEFORE,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        },
        tool_use_id="toolu_edit",
    )
    send("Stop", stop_hook_active=False)
    send("UserPromptSubmit", prompt="continue")
    send(
        "PostToolUseFailure",
        tool_name="Read",
        tool_input={"file_path": str(ws / "invoicer" / "missing.py")},
        tool_use_id="toolu_missing",
        error="File does not exist.",
    )

    steps = rows(capture_home, "SELECT * FROM steps ORDER BY at, id")
    assert [(s["kind"], s["tool"]) for s in steps] == [
        ("user", None),
        ("tool", "Grep"),
        ("tool", "Read"),
        ("tool", "Edit"),
        ("user", None),
        ("tool", "Read"),
    ]
    assert _text(capture_home, steps[0]["text_hash"]) == PROMPT
    assert grep_out in (_text(capture_home, steps[1]["text_hash"]) or "")
    assert _text(capture_home, steps[2]["text_hash"]) == TOTALS_BEFORE
    assert steps[2]["path"] == str(totals) and steps[2]["call_id"] == "toolu_read"
    assert json.loads(_text(capture_home, steps[3]["input_hash"]) or "{}")["new_string"] == new
    assert steps[5]["is_error"] == 1
    assert _text(capture_home, steps[5]["text_hash"]) == "File does not exist."

    # the edit keeps the file as the agent found it
    (before,) = rows(
        capture_home,
        "SELECT b.text_hash, b.via FROM proposal_before b JOIN proposals p ON p.id = b.proposal_id",
    )
    assert (_text(capture_home, before["text_hash"]), before["via"]) == (TOTALS_BEFORE, "payload")

    # both turns answer the first request; the steps belong to their turn's episode
    episodes = rows(
        capture_home, "SELECT id, prompt, task, task_source FROM episodes ORDER BY started_at"
    )
    assert [(e["task"], e["task_source"]) for e in episodes] == [
        (PROMPT, "prompt"),
        (PROMPT, "earlier-prompt"),
    ]
    assert [s["episode_id"] for s in steps] == [episodes[0]["id"]] * 4 + [episodes[1]["id"]] * 2

    # `capture show`: the task, and the reads in order with their results folded
    shown = run_capture("show", episodes[0]["id"], "--no-diff", env={"NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert f"task      (prompt) {PROMPT}" in out
    assert out.index(" Grep  ") < out.index(" Read  ") < out.index(" Edit  ")
    assert "more line(s)" in out  # the file the Read returned, folded after three lines
