"""Disk full, then freed: every payload a hook accepted during the outage is recorded once
space returns, by the next hook call, without anyone running anything. On a real full file
system (a small tmpfs, which needs root to mount; skipped otherwise) and, always, with the
store's write failing as a full disk makes it fail."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capture.connection import sqlite3
from tests.conftest import capture_env
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    example,
    make_workspace,
    no_agent_env,
)


def edit_payload(ws: Path, tool_use_id: str) -> str:
    payload: dict[str, Any] = example("claude_code_posttooluse_edit.json", ws)
    payload["tool_use_id"] = tool_use_id
    return json.dumps(payload)


def fire(home: Path, ws: Path, tool_use_id: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "capture", "hook", "claude-code"],
        input=edit_payload(ws, tool_use_id).encode(),
        capture_output=True,
        cwd=ws,
        env=capture_env(home),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == b"", result.stderr


def recorded_ids(home: Path) -> set[str]:
    conn = sqlite3.connect(home / "data" / "capture.db", timeout=30)
    try:
        rows = conn.execute("SELECT payload FROM events WHERE kind LIKE 'hook%'").fetchall()
    finally:
        conn.close()
    return {json.loads(r[0]).get("tool_use_id") for r in rows if r[0] and r[0].startswith("{")}


def wait_until(check: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(path: Path) -> None:
    """Write until the file system is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1 << 9):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, bytes(size))
    finally:
        os.close(fd)
    with pytest.raises(OSError) as full:
        path.with_name("probe").write_bytes(b"x" * 8192)
    assert full.value.errno == errno.ENOSPC


def test_payloads_fired_while_the_disk_is_full_are_recorded_when_space_returns(
    tmp_path: Path, small_fs: Path
) -> None:
    home = small_fs / "home"
    ws = make_workspace(tmp_path)
    fire(home, ws, "toolu_before")
    spool = home / "data" / "hook-spool.bin"
    wait_until(lambda: spool.exists() and "toolu_before" in recorded_ids(home))
    fill(small_fs / "filler")
    outage = [f"toolu_outage_{i}" for i in range(5)]
    for tool_use_id in outage:
        fire(home, ws, tool_use_id)
    (small_fs / "filler").unlink()
    fire(home, ws, "toolu_after")  # the next hook call: nobody runs anything else
    wait_until(lambda: {*outage, "toolu_after"} <= recorded_ids(home))
    log = (home / "state" / "log" / "hooks.log").read_text()
    assert "payload(s) from the spool" in log  # the outage's payloads went through it


def test_a_payload_set_aside_for_a_full_disk_is_applied_by_the_next_hook(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = make_workspace(tmp_path)
    fire(home, ws, "toolu_first")
    fire(home, ws, "toolu_second")
    wait_until(lambda: "toolu_second" in recorded_ids(home))
    conn = sqlite3.connect(home / "data" / "capture.db", timeout=30)
    with conn:
        # set aside by a full disk (as before this fix), and one for a fault of its own
        for tool_use_id, error in (
            ("toolu_transient", "OperationalError: database or disk is full"),
            ("toolu_poisoned", "ValueError: something in the payload itself"),
        ):
            conn.execute(
                "INSERT INTO hook_inbox (at, agent, event, payload, cwd, env, set_aside_at, "
                "error, attempts) VALUES (?, 'claude-code', NULL, ?, ?, '', ?, ?, 1)",
                (time.time(), edit_payload(ws, tool_use_id).encode(), str(ws), 1.0, error),
            )
    conn.close()
    fire(home, ws, "toolu_third")  # no `capture doctor --retry`
    wait_until(lambda: {"toolu_transient", "toolu_third"} <= recorded_ids(home))
    assert "toolu_poisoned" not in recorded_ids(home)  # still set aside, for doctor to show
