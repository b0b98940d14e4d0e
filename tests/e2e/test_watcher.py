"""The watcher for terminal agents, end to end with real processes and no editor: the agent
edits through the real `capture hook claude-code`, the hook starts `capture watch`, and the
user's later changes on disk are measured at each checkpoint's due time."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from tests.conftest import RunCapture
from tests.support.hook_support import no_agent_env  # noqa: F401 - an autouse fixture
from tests.support.watcher_support import (
    NEW_LINE,
    WATCHER_ENV,
    agent_edit,
    git,
    git_workspace,
    show,
    sleep_until,
    stopping_watchers,
    wait_for,
    watcher_pid,
)

#: Load on a shared machine delays the watcher's reads: an on-time checkpoint is measured
#: within this of its due time (the recorded changes it is rebuilt from make it exact; the
#: margin covers a read of the disk when the watcher started late).
ON_TIME = 1.0


def _windows(episode: dict) -> dict[str, dict]:
    (proposal,) = episode["proposals"]
    return {c["window"]: c for c in proposal["checkpoints"] if c["window"] != "late"}


def _delay(checkpoint: dict) -> float:
    from datetime import datetime

    observed = datetime.fromisoformat(checkpoint["observed_at"].replace("Z", "+00:00"))
    due = datetime.fromisoformat(checkpoint["due_at"].replace("Z", "+00:00"))
    return (observed - due).total_seconds()


def test_checkpoints_on_time_with_no_editor(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = git_workspace(tmp_path)
    home = run_capture.home  # type: ignore[attr-defined]
    with stopping_watchers(home):
        applied = agent_edit(run_capture, ws, WATCHER_ENV)
        assert wait_for(lambda: watcher_pid(home), "the hook to start the watcher", 30)
        sleep_until(applied + 5)
        git(ws, "checkout", "--", "invoicer/totals.py")  # the user restores the file
        sleep_until(applied + 20)  # nothing of ours runs but the watcher
        episode = show(run_capture)
    windows = _windows(episode)
    assert set(windows) == {"2s", "4s", "8s"}
    assert windows["2s"]["retention"] == 1.0 and windows["2s"]["outcome"] == "kept"
    assert windows["4s"]["retention"] == 1.0 and windows["4s"]["outcome"] == "kept"
    assert windows["8s"]["retention"] == 0.0 and windows["8s"]["outcome"] == "undone"
    (proposal,) = episode["proposals"]
    assert proposal["outcome"] == "undone"
    for label, checkpoint in windows.items():
        assert checkpoint["late_seconds"] is None, label
        assert checkpoint["via"] in ("disk-watched", "disk"), label
        assert _delay(checkpoint) <= ON_TIME, (label, _delay(checkpoint))


def test_watcher_killed_at_three_seconds(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = git_workspace(tmp_path)
    home = run_capture.home  # type: ignore[attr-defined]
    with stopping_watchers(home):
        applied = agent_edit(run_capture, ws, WATCHER_ENV)
        pid = wait_for(lambda: watcher_pid(home), "the hook to start the watcher", 30)
        # the 2 s checkpoint is the watcher's before it is killed
        wait_for(lambda: _observed(home) >= 1, "the 2 s checkpoint", 30)
        sleep_until(applied + 3)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: watcher_pid(home) is None, "the watcher to die", 30)
        sleep_until(applied + 5)
        git(ws, "checkout", "--", "invoicer/totals.py")
        sleep_until(applied + 20)
        episode = show(run_capture)
        assert watcher_pid(home) is None, "a reading command started a watcher"
    windows = _windows(episode)
    first = windows["2s"]
    assert first["late_seconds"] is None and first["retention"] == 1.0
    assert _delay(first) <= ON_TIME
    for label, due in (("4s", 4.0), ("8s", 8.0)):
        checkpoint = windows[label]
        assert checkpoint["via"] == "disk-late", label
        # measured by `capture show` at 20 s or later: late by its delay, as recorded
        assert checkpoint["late_seconds"] >= 20 - due - ON_TIME, label
        assert abs(checkpoint["late_seconds"] - _delay(checkpoint)) < 0.01, label
        assert checkpoint["retention"] == 0.0, label
    (proposal,) = episode["proposals"]
    assert proposal["outcome"] == "undone"
    assert [h["new_text"] for h in proposal["hunks"]] == [NEW_LINE]


def _observed(home: Path) -> int:
    from tests.support.hook_support import rows

    found = rows(home, "SELECT count(*) FROM checkpoints WHERE observed_at IS NOT NULL")
    return int(found[0][0]) if found else 0


def _log(home: Path) -> list[str]:
    path = home / "state" / "log" / "watcher.log"
    return path.read_text().splitlines() if path.exists() else []


def test_one_watcher_per_installation_and_it_exits_by_itself(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    env = {**WATCHER_ENV, "CAPTURE_WINDOWS": "1s,2s", "CAPTURE_WATCHER_IDLE": "5s"}
    first, second = git_workspace(tmp_path, "first"), git_workspace(tmp_path, "second")
    home = run_capture.home  # type: ignore[attr-defined]
    other_home = tmp_path / "other-home"
    with stopping_watchers(home, other_home):
        agent_edit(run_capture, first, env)
        pid = wait_for(lambda: watcher_pid(home), "the hook to start the watcher", 30)
        agent_edit(run_capture, second, env)  # a second hook while it runs
        assert watcher_pid(home) == pid
        # another installation gets its own
        agent_edit(run_capture, tmp_path / "first", {**env, "CAPTURE_HOME": str(other_home)})
        other = wait_for(lambda: watcher_pid(other_home), "the other home's watcher", 30)
        assert other != pid
        # nothing pending once the 2 s windows are measured: each exits by itself
        wait_for(lambda: watcher_pid(home) is None, "the watcher to exit", 60)
        wait_for(lambda: watcher_pid(other_home) is None, "the other watcher to exit", 60)
    assert sum("] started" in line for line in _log(home)) == 1
    assert any("nothing pending: exiting" in line for line in _log(home))
    assert any("nothing pending: exiting" in line for line in _log(other_home))
    assert _observed(home) == 4  # two proposals, two windows each, all measured


def test_a_commit_of_the_agents_lines_is_named_while_the_watcher_runs(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    env = {**WATCHER_ENV, "CAPTURE_WINDOWS": "1s,2s", "CAPTURE_WATCHER_IDLE": "120s"}
    ws = git_workspace(tmp_path)
    home = run_capture.home  # type: ignore[attr-defined]
    with stopping_watchers(home):
        agent_edit(run_capture, ws, env)
        wait_for(lambda: watcher_pid(home), "the hook to start the watcher", 30)
        wait_for(lambda: _settled(home), "the edit to be settled", 60)
        git(ws, "commit", "-q", "-am", "round half-up")
        sha = git(ws, "rev-parse", "HEAD")
        # no command of ours runs: the watcher sees HEAD move and runs the late pass
        wait_for(lambda: _committed(home) == sha, "the late pass to name the commit", 60)
        episode = show(run_capture)
    (proposal,) = episode["proposals"]
    assert proposal["outcome"] == "kept"
    assert proposal["late_signals"]["commit"] == sha


def _settled(home: Path) -> bool:
    from tests.support.hook_support import rows

    return bool(rows(home, "SELECT 1 FROM proposals WHERE settled_at IS NOT NULL"))


def _committed(home: Path) -> str | None:
    from tests.support.hook_support import rows

    found = rows(home, "SELECT commit_sha FROM late_signals WHERE commit_sha IS NOT NULL")
    return str(found[0][0]) if found else None


def test_a_repository_of_100000_files_is_not_watched_whole(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = git_workspace(tmp_path)
    for i in range(1000):
        folder = ws / "vendor" / f"pkg{i}"
        folder.mkdir(parents=True)
        for j in range(100):
            (folder / f"m{j}.py").touch()
    home = run_capture.home  # type: ignore[attr-defined]
    env = {**WATCHER_ENV, "CAPTURE_WINDOWS": "30s,1m"}
    with stopping_watchers(home):
        agent_edit(run_capture, ws, env)
        wait_for(lambda: watcher_pid(home), "the hook to start the watcher", 30)
        status = home / "state" / "watcher.json"
        wait_for(
            lambda: status.exists() and json.loads(status.read_text())["files"] == 1,
            "the watcher to follow the edited file",
            60,
        )
        # one watch, on the edited file's folder, among 1,001 folders of 100,001 files
        assert json.loads(status.read_text())["folders"] == [str(ws / "invoicer")]
        totals = ws / "invoicer" / "totals.py"
        totals.write_text(totals.read_text() + "# reviewed\n")  # the user's own change
        wait_for(lambda: _recorded_text(home, "# reviewed"), "the change to be recorded", 60)


def _recorded_text(home: Path, needle: str) -> bool:
    from tests.support.hook_support import rows

    found = rows(home, "SELECT payload FROM events WHERE kind = 'file-change'")
    return any(needle in (json.loads(r[0])["text"] or "") for r in found)
