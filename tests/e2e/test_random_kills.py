"""SIGKILL at random points of the hook, the applier, the wrapper, a migration and the server:
what was committed (a hook that returned, a run that ended) is there once, nothing is there
twice, the database's integrity holds, and a server started afterwards works."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from capture.connection import sqlite3
from capture.store.schema import SCHEMA_VERSION
from tests.conftest import capture_env
from tests.support.hook_support import example, make_workspace
from tests.support.rawlsp import RawClient

CAPTURE = [sys.executable, "-m", "capture"]
ROUNDS = 8


def _payload(ws: Path, tool_use_id: str) -> bytes:
    data = example("claude_code_posttooluse_edit.json", ws)
    data["tool_use_id"] = tool_use_id
    return json.dumps(data).encode()


def _killed(
    command: list[str], env: dict[str, str], cwd: Path, delay: float, stdin: bytes = b""
) -> None:
    """Start ``command``, SIGKILL it after ``delay`` seconds (if it still runs)."""
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )
    assert proc.stdin is not None
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    time.sleep(delay)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


def _run(command: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"") -> None:
    done = subprocess.run(command, input=stdin, capture_output=True, cwd=cwd, env=env, timeout=120)
    assert done.returncode == 0, done.stderr


def _query(home: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(home / "data" / "capture.db", timeout=30)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_sigkill_at_random_points_loses_nothing_committed(tmp_path: Path) -> None:
    rng = random.Random(20261204)
    ws = make_workspace(tmp_path)
    home = tmp_path / "home-capture"
    env = capture_env(home)
    # The store's first opening is itself a migration: killed at random points, then again.
    for _ in range(3):
        _killed([*CAPTURE, "doctor"], env, ws, rng.uniform(0.05, 0.6))
    _run([*CAPTURE, "doctor"], env, ws)
    assert _query(home, "PRAGMA user_version") == [(SCHEMA_VERSION,)]

    returned: list[str] = []  # hooks that returned: the agent was told they were recorded
    killed: list[str] = []
    for i in range(ROUNDS):
        # A hook that returns; then its applier (any reading command drains) killed midway.
        tool = f"toolu_done_{i}"
        _run([*CAPTURE, "hook", "claude-code"], env, ws, _payload(ws, tool))
        returned.append(tool)
        _killed([*CAPTURE, "episodes", "--json"], env, ws, rng.uniform(0.0, 0.4))
        # A hook killed midway: recorded or not, never twice.
        tool = f"toolu_killed_{i}"
        killed.append(tool)
        hook = [*CAPTURE, "hook", "claude-code"]
        _killed(hook, env, ws, rng.uniform(0.0, 0.15), _payload(ws, tool))
        # The wrapper killed midway through its command or its write.
        marker = f"killed_run_{i}"
        command = [
            *CAPTURE,
            "run",
            "--",
            sys.executable,
            "-c",
            f"import time; time.sleep(0.1) # {marker}",
        ]
        _killed(command, env, ws, rng.uniform(0.0, 0.5))
    # A run that ends is recorded, whatever was killed before it.
    _run([*CAPTURE, "run", "--", sys.executable, "-c", "# finished_run"], env, ws)
    _run([*CAPTURE, "episodes", "--json"], env, ws)  # the last drain, not killed

    # The server killed in its turn, then a new one on the same store.
    first = RawClient(home)
    first.initialize(ws)
    first.notify("capture/testRun", {"command": "pytest", "name": "before-kill", "exitCode": 0})
    first.stats()  # answered after the run was committed
    first.kill()
    second = RawClient(home)
    try:
        second.initialize(ws)
        assert second.stats()["server"]["errors"] == 0
        assert second.close() == 0
    finally:
        if second.process.poll() is None:
            second.kill()

    assert _query(home, "PRAGMA integrity_check") == [("ok",)]
    assert _query(home, "SELECT count(*) FROM hook_inbox") == [(0,)]
    keys = [str(k) for (k,) in _query(home, "SELECT dedupe_key FROM proposals")]
    for tool in returned:
        assert sum(tool in k for k in keys) == 1, (tool, keys)
    for tool in killed:
        assert sum(tool in k for k in keys) <= 1, (tool, keys)
    payloads = [str(p) for (p,) in _query(home, "SELECT payload FROM events WHERE kind = 'hook'")]
    for tool in returned:
        assert sum(f'"{tool}"' in p for p in payloads) == 1, tool
    for tool in killed:
        assert sum(f'"{tool}"' in p for p in payloads) <= 1, tool
    commands = [str(c) for (c,) in _query(home, "SELECT command FROM test_runs")]
    assert sum("finished_run" in c for c in commands) == 1
    for i in range(ROUNDS):
        assert sum(f"killed_run_{i}" in c for c in commands) <= 1
    names = [n for (n,) in _query(home, "SELECT name FROM test_runs WHERE name IS NOT NULL")]
    assert names.count("before-kill") == 1
