"""Judge the commit that carries the lines: an agent's edit imported from a transcript whose
lines land in git two commits after the edit (the first commit after it touches the file without
them). Through real git and the real CLI: the import judges the edit against the carrying commit
(`kept`, not `undone`), and the late pass measures survival from that commit."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import RunCapture
from tests.support.hook_support import rows

BEFORE = "def total(xs):\n    return 0\n\n\ndef other():\n    return 3\n"
AGENT_OLD = "    return 0\n"
AGENT_NEW = "    result = sum(x for x in xs if x is not None)\n    return result\n"


def _git(ws: Path, *args: str, at: float | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid"}
    env.update(GIT_COMMITTER_NAME="dev", GIT_COMMITTER_EMAIL="dev@example.invalid")
    if at is not None:
        stamp = f"@{int(at)} +0000"
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    out = subprocess.run(
        ["git", "-C", str(ws), *args], check=True, capture_output=True, text=True, env=env
    )
    return out.stdout.strip()


def _commit(ws: Path, text: str, message: str, at: float) -> str:
    (ws / "calc.py").write_text(text)
    _git(ws, "add", "calc.py")
    _git(ws, "commit", "-q", "-m", message, at=at)
    return _git(ws, "rev-parse", "HEAD")


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _transcript(ws: Path, at: float) -> list[dict[str, Any]]:
    target = str(ws / "calc.py")
    common = {"sessionId": "s-late", "cwd": str(ws), "version": "1.0.57"}
    tool_input = {"file_path": target, "old_string": AGENT_OLD, "new_string": AGENT_NEW}
    return [
        {
            **common,
            "type": "user",
            "uuid": "p1",
            "timestamp": _iso(at - 1),
            "message": {"role": "user", "content": "make total sum its values"},
        },
        {
            **common,
            "type": "assistant",
            "timestamp": _iso(at),
            "message": {
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": tool_input}],
            },
        },
        {
            **common,
            "type": "user",
            "timestamp": _iso(at + 1),
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
            "toolUseResult": {
                "filePath": target,
                "oldString": AGENT_OLD,
                "newString": AGENT_NEW,
                "originalFile": BEFORE,
            },
        },
    ]


def test_the_lines_landing_two_commits_after_the_edit_are_kept_from_the_carrying_commit(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    ws = ws.resolve()
    _git(ws, "init", "-q")
    day = 86400.0
    edit_at = time.time() - 3 * day
    _commit(ws, BEFORE, "Start calc", edit_at - day)
    # the first commit after the edit touches the file without the agent's lines (the user
    # committed another change first); the next one carries them
    first = _commit(ws, BEFORE.replace("return 3", "return 4"), "Other returns 4", edit_at + 3600)
    after = BEFORE.replace("return 3", "return 4").replace(AGENT_OLD, AGENT_NEW)
    carrying = _commit(
        ws, after, "Sum the values\n\nA regression test follows later.", edit_at + 7200
    )
    history = tmp_path / "history" / "s-late.jsonl"
    history.parent.mkdir()
    history.write_text("".join(json.dumps(r) + "\n" for r in _transcript(ws, edit_at)))

    out = run_capture("import", "claude-code", str(history), cwd=ws)
    assert out.returncode == 0, out.stderr
    (proposal,) = rows(capture_home, "SELECT id, outcome, reason FROM proposals")
    assert proposal["outcome"] == "kept", tuple(proposal)
    vias = {
        r["via"] for r in rows(capture_home, "SELECT via FROM checkpoints WHERE window != 'late'")
    }
    assert vias == {"git"}

    late = run_capture("observe", "--late", cwd=ws)
    assert late.returncode == 0, late.stderr
    (signals,) = rows(capture_home, "SELECT commit_sha, committed, lines FROM late_signals")
    assert signals["commit_sha"] == carrying != first
    assert signals["committed"] >= 1
