"""The reading commands evaluate what is due before they answer: with no watcher and no later
hook call, `capture report`, `episodes`, `show` and `export` still print settled outcomes,
each checkpoint read late marked so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import RunCapture
from tests.support.hook_support import no_agent_env, rows  # noqa: F401 - an autouse fixture
from tests.support.watcher_support import agent_edit, git, git_workspace, sleep_until

#: long enough that the hook calls themselves measure none of them, even on a busy machine
WINDOWS = {"CAPTURE_WATCHER": "off", "CAPTURE_WINDOWS": "2s,3s,4s"}


@pytest.mark.parametrize(
    "command",
    [
        ["report"],
        ["episodes", "--json"],
        ["export", "--format", "episodes", "--quiet", "--out", "{out}"],
    ],
    ids=["report", "episodes", "export"],
)
def test_a_reading_command_settles_what_is_due(
    tmp_path: Path, run_capture: RunCapture, command: list[str]
) -> None:
    ws = git_workspace(tmp_path)
    applied = agent_edit(run_capture, ws, WINDOWS)
    git(ws, "checkout", "--", "invoicer/totals.py")
    home = run_capture.home  # type: ignore[attr-defined]
    sleep_until(applied + 7)  # every window passed, and by more than the late tolerance
    args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
    run_capture(*args, cwd=ws, env=WINDOWS, check=True)
    found = rows(home, "SELECT via, late_seconds FROM checkpoints WHERE window != 'late'")
    assert len(found) == 3
    assert all(r["via"] == "disk-late" and r["late_seconds"] > 2 for r in found)
    (outcome,) = [r[0] for r in rows(home, "SELECT outcome FROM proposals")]
    assert outcome == "undone"
