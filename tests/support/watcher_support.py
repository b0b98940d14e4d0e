"""Helpers for the watcher's end-to-end tests: a git workspace, the agent's edit through the
real `capture hook claude-code`, the watcher's pid from its lock, and its end."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.conftest import RunCapture
from tests.support.hook_support import TOTALS_AFTER, TOTALS_BEFORE, hook, rows

OLD_LINE = "    return round(subtotal * rate, 2)"
NEW_LINE = '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)'


def git(ws: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ws), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def git_workspace(tmp_path: Path, name: str = "invoicer") -> Path:
    """A repository with totals.py committed as it was before the agent."""
    ws = (tmp_path / name).resolve()
    (ws / "invoicer").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    git(ws, "config", "user.email", "dana@example.com")
    git(ws, "config", "user.name", "Dana")
    (ws / "invoicer" / "totals.py").write_text(TOTALS_BEFORE)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "totals")
    return ws


def agent_edit(run_capture: RunCapture, ws: Path, env: dict[str, str]) -> float:
    """The agent's Edit as Claude Code makes it: the file written, then the PostToolUse hook.
    Returns when the proposal was applied (as recorded)."""
    totals = ws / "invoicer" / "totals.py"
    session: dict[str, Any] = {
        "session_id": "5d7e8f1c-2a40-4b1a-9c33-2e6f0b7d9a11",
        "prompt_id": "7f402b9e-6c1d-4e0a-8d52-91a3c0f4e7b8",
        "transcript_path": str(ws.parent / "session.jsonl"),
        "cwd": str(ws),
        "permission_mode": "acceptEdits",
    }
    # the user's prompt comes first, as in a session (its hook call makes the database)
    prompt = {**session, "hook_event_name": "UserPromptSubmit", "prompt": "round half-up"}
    hook(run_capture, "claude-code", prompt, cwd=ws, env=env)
    totals.write_text(TOTALS_AFTER)
    payload: dict[str, Any] = {
        **session,
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(totals), "old_string": OLD_LINE, "new_string": NEW_LINE},
        "tool_response": {"filePath": str(totals), "originalFile": TOTALS_BEFORE},
        "tool_use_id": f"toolu_{ws.name}",
    }
    hook(run_capture, "claude-code", payload, cwd=ws, env=env)
    found = rows(run_capture.home, "SELECT applied_at FROM proposals ORDER BY applied_at DESC")  # type: ignore[attr-defined]
    assert found, "the hook recorded no proposal"
    return float(found[0][0])


def watcher_pid(home: Path) -> int | None:
    """The pid of the watcher holding this installation's lock, None when none does."""
    import fcntl

    path = home / "state" / "watcher.lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = path.read_text().strip()
            return int(text) if text.isdigit() else None
        return None
    finally:
        os.close(fd)


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.time()))


def show(run_capture: RunCapture) -> dict[str, Any]:
    (episode_id,) = [r[0] for r in rows(run_capture.home, "SELECT id FROM episodes")]  # type: ignore[attr-defined]
    result = run_capture("show", "--json", episode_id, check=True)
    value: dict[str, Any] = json.loads(result.stdout)
    return value


@contextlib.contextmanager
def stopping_watchers(*homes: Path) -> Iterator[None]:
    """End the watchers the test started, whatever happens in it."""
    try:
        yield
    finally:
        for home in homes:
            pid = watcher_pid(home)
            if pid is not None:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
                with contextlib.suppress(AssertionError):
                    wait_for(lambda h=home: watcher_pid(h) is None, "the watcher to stop", 10)


#: The hook starts the watcher (the suite's default is off); windows of 2, 4 and 8 s.
WATCHER_ENV = {"CAPTURE_WATCHER": "on", "CAPTURE_WINDOWS": "2s,4s,8s", "CAPTURE_WATCHER_IDLE": "3s"}
