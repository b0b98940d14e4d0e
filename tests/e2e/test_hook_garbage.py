"""What a hook cannot use: it exits 0 with nothing on stdout or stderr, records nothing wrong, and
logs one line. And what the hook path must not import."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunCapture, capture_env
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    count,
    example,
    hook,
    log_lines,
    make_workspace,
    no_agent_env,
    rows,
    wait_for_queue,
)

TABLES = ("proposals", "hunks", "checkpoints", "test_runs", "episodes", "hook_pending")


def domain_counts(home: Path) -> dict[str, int]:
    return {t: count(home, t) for t in TABLES}


@pytest.fixture
def ws(tmp_path: Path, run_capture: RunCapture) -> Path:
    ws = make_workspace(tmp_path)
    # one good edit first: garbage afterwards must leave it as it is
    hook(run_capture, "claude-code", example("claude_code_posttooluse_edit.json", ws), cwd=ws)
    return ws


def edit_of(ws: Path, path: Path) -> dict:
    payload = example("claude_code_posttooluse_edit.json", ws)
    payload["tool_use_id"] = "toolu_other"
    payload["tool_input"]["file_path"] = str(path)
    payload["tool_response"]["filePath"] = str(path)
    return payload


def test_garbage_on_stdin(ws: Path, capture_home: Path, run_capture: RunCapture) -> None:
    outside = ws.parent / "elsewhere" / "notes.py"
    outside.parent.mkdir()
    outside.write_text("x = 1\n")
    big = json.dumps({"hook_event_name": "PostToolUse", "blob": "x" * (20 * 1024 * 1024)})
    cases: dict[str, tuple[str | bytes, str]] = {
        "empty": (b"", "empty payload"),
        "not json": (b"\x00\xff{not json", "not JSON"),
        "a json list": ("[1, 2, 3]", "not an object"),
        "20 MB": (big, "over the"),
        "path outside the workspace": (json.dumps(edit_of(ws, outside)), "outside the workspace"),
    }
    before = domain_counts(capture_home)
    events_before = count(capture_home, "events")
    for name, (body, message) in cases.items():
        lines_before = len(log_lines(capture_home))
        result = run_capture("hook", "claude-code", input=body, cwd=ws)
        wait_for_queue(capture_home)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), name
        new_lines = log_lines(capture_home)[lines_before:]
        assert len(new_lines) == 1, (name, new_lines)
        assert message in new_lines[0], (name, new_lines)
        assert " claude-code " in new_lines[0]
    assert domain_counts(capture_home) == before
    # the JSON payload about a file it could not use is kept as an event; the rest are not
    assert count(capture_home, "events") == events_before + 1


def binary_edit(ws: Path) -> dict:
    """An Edit of a file that is not text: the payload carries no pre-image to rebuild from."""
    binary = ws / "invoicer" / "logo.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8)
    payload = edit_of(ws, binary)
    del payload["tool_response"]["originalFile"]
    return payload


def test_an_applied_edit_that_cannot_be_followed_is_lost_with_its_reason(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    # announced, then applied to a file that is no text: applied and lost, never a denial
    payload = binary_edit(ws)
    pre = {**payload, "hook_event_name": "PreToolUse"}
    del pre["tool_response"]
    for body in (pre, payload, example("claude_code_stop.json", ws)):
        result = run_capture("hook", "claude-code", input=json.dumps(body), cwd=ws)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    wait_for_queue(capture_home)
    (row,) = rows(capture_home, "SELECT * FROM proposals WHERE path = 'invoicer/logo.png'")
    assert (row["state"], row["outcome"], row["reason"]) == ("applied", "lost", "binary")
    assert "not a UTF-8 text file" in log_lines(capture_home)[-1]


def test_unknown_agent_and_database_trouble_still_exit_0(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    result = run_capture("hook", "vim", input="{}", cwd=ws)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert "unknown agent 'vim'" in log_lines(capture_home)[-1]
    # a database that is not one: logged, exit 0
    broken = ws.parent / "broken-home"
    (broken / "data").mkdir(parents=True)
    (broken / "data" / "capture.db").write_bytes(b"this is not a database" * 100)
    payload = json.dumps(example("claude_code_posttooluse_edit.json", ws))
    result = run_capture("hook", "claude-code", input=payload, env={"CAPTURE_HOME": str(broken)})
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    (line,) = (broken / "state" / "log" / "hooks.log").read_text().splitlines()
    assert "internal error" in line or "cannot open" in line


FORBIDDEN = ("pygls", "lsprotocol", "sqlite_utils", "httpx", "rich", "watchdog")
#: What the agent waits for queues the payload and returns: even the core's own heavier imports
#: (alignment, dataclasses, JSON) are left to the detached child that applies it. Of the store,
#: only the queue's rows are loaded (`STORE_IN_FAST_LANE`).
FAST_LANE_FORBIDDEN = (
    *FORBIDDEN,
    "rapidfuzz",
    "dataclasses",
    "json",
    "argparse",
    "capture.store.database",
    "capture.recording",
    "capture.edits",
)

STORE_IN_FAST_LANE = ["capture.store", "capture.store.inbox_rows"]


def test_hook_path_imports_nothing_heavy(ws: Path, capture_home: Path) -> None:
    # the database exists already (the fixture recorded an edit): no migration is pending
    payload = example("claude_code_posttooluse_edit.json", ws)
    payload["tool_use_id"] = "toolu_imports"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "capture", "hook", "claude-code"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=ws,
        env=capture_env(capture_home),
        timeout=60,
    )
    assert proc.returncode == 0
    imported = set(
        re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", proc.stderr.decode(), re.M)
    )
    assert "capture.hooks.inbox" in imported
    heavy = sorted(m for m in imported if m in FAST_LANE_FORBIDDEN or m.split(".")[0] in FORBIDDEN)
    assert heavy == []
    assert sorted(m for m in imported if m.startswith("capture.store")) == STORE_IN_FAST_LANE
    wait_for_queue(capture_home)
    assert count(capture_home, "proposals") == 2  # the payload was really applied
