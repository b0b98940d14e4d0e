"""Fuzzed payloads through the real `capture hook` process (a handful: the many are applied in
process by tests/unit/capture/hooks/test_payload_fuzz.py), and a hook run where the OS hands it
names UTF-8 cannot hold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import RunCapture, capture_env
from tests.support.hook_payloads import PREFIXES, HookCall, hook_call
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    example,
    hook,
    log_lines,
    make_workspace,
    no_agent_env,
    rows,
    wait_for_queue,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def edit(ws: Path, tool_use_id: str) -> dict[str, object]:
    payload = example("claude_code_posttooluse_edit.json", ws)
    payload["tool_use_id"] = tool_use_id
    return payload


def recorded(home: Path, tool_use_id: str) -> int:
    return len(rows(home, "SELECT 1 FROM proposals WHERE dedupe_key LIKE ?", f"%{tool_use_id}%"))


def run_hook(home: Path, agent: str, body: bytes, cwd: Path | bytes, **env: str) -> None:
    """`capture hook AGENT` as the agent runs it: exit 0, nothing on stderr, stdout empty but
    for the answer Cursor's prompt hook expects."""
    proc = subprocess.run(
        [sys.executable, "-m", "capture", "hook", agent],
        input=body,
        capture_output=True,
        cwd=cwd,
        env=capture_env(home, **env),
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr
    assert proc.stdout in (b"", b'{"continue": true}\n'), proc.stdout


def test_a_cwd_and_variables_utf8_cannot_hold_lose_no_payload(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    hook(run_capture, "claude-code", edit(ws, "toolu_first"), cwd=ws)  # the store exists
    odd = os.fsencode(ws) + b"/build-\xff"
    os.mkdir(odd)
    env = capture_env(capture_home)
    env_bytes = {os.fsencode(k): os.fsencode(v) for k, v in env.items()}
    env_bytes[b"CLAUDE_PROJECT_DIR"] = os.fsencode(ws) + b"\xfe"
    proc = subprocess.run(
        [sys.executable, "-m", "capture", "hook", "claude-code"],
        input=json.dumps(edit(ws, "toolu_odd_cwd")).encode(),
        capture_output=True,
        cwd=odd,
        env=env_bytes,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    wait_for_queue(capture_home)
    # the queue cannot hold that cwd as text: the hook records the payload itself
    assert recorded(capture_home, "toolu_odd_cwd") == 1, log_lines(capture_home)
    hook(run_capture, "claude-code", edit(ws, "toolu_after"), cwd=ws)
    assert recorded(capture_home, "toolu_after") == 1


@pytest.mark.parametrize("agent", sorted(PREFIXES))
def test_fuzzed_payloads_through_the_hook_process(ws: Path, capture_home: Path, agent: str) -> None:
    run_hook(capture_home, "claude-code", json.dumps(edit(ws, "toolu_0")).encode(), ws)
    sent = iter(range(1, 1000))

    @settings(
        max_examples=3,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(call=hook_call(agent, ws))
    def one(call: HookCall) -> None:
        raw, _event, _cwd, _env = call
        run_hook(capture_home, agent, raw, ws)
        tool_use_id = f"toolu_{next(sent)}"
        run_hook(capture_home, "claude-code", json.dumps(edit(ws, tool_use_id)).encode(), ws)
        wait_for_queue(capture_home)
        assert recorded(capture_home, tool_use_id) == 1, log_lines(capture_home)[-5:]

    one()
    (check,) = rows(capture_home, "PRAGMA integrity_check")
    assert check[0] == "ok"
    episodes = subprocess.run(
        [sys.executable, "-m", "capture", "episodes", "--json"],
        capture_output=True,
        cwd=ws,
        env=capture_env(capture_home),
        timeout=60,
    )
    assert episodes.returncode == 0, episodes.stderr
    assert json.loads(episodes.stdout)


def test_a_path_the_snapshot_cannot_read_is_logged_and_the_edit_still_recorded(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    hook(run_capture, "claude-code", edit(ws, "toolu_first"), cwd=ws)  # the store exists
    # a lone surrogate in the path: the fast lane's scan cannot name the file
    body = json.dumps(edit(ws, "toolu_lone")).replace("totals.py", "totals\\ud800.py")
    assert "\\ud800" in body
    result = run_capture("hook", "claude-code", input=body, cwd=ws)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    wait_for_queue(capture_home)
    assert any("snapshot: " in line for line in log_lines(capture_home)), log_lines(capture_home)
    hook(run_capture, "claude-code", edit(ws, "toolu_after"), cwd=ws)
    assert recorded(capture_home, "toolu_after") == 1
