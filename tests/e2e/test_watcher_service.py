"""`capture install watcher` / `uninstall watcher` write and remove the user service's file
(not systemd or launchd themselves), and `capture doctor` says whether the watcher runs."""

from __future__ import annotations

import json
import os
import plistlib
import signal
import subprocess
import sys
from pathlib import Path

from capture.watch.service import service_text
from tests.conftest import RunCapture, capture_env
from tests.support.watcher_support import stopping_watchers, wait_for, watcher_pid


def test_install_writes_a_systemd_user_unit_and_uninstall_removes_it(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    env = {"HOME": str(tmp_path / "user"), "XDG_CONFIG_HOME": str(tmp_path / "user" / "cfg")}
    if sys.platform == "darwin":
        unit = tmp_path / "user" / "Library" / "LaunchAgents" / "dev.agent-capture.watch.plist"
    else:
        unit = tmp_path / "user" / "cfg" / "systemd" / "user" / "capture-watch.service"
    done = run_capture("install", "watcher", env=env, check=True)
    assert str(unit) in done.stdout and unit.exists()
    text = unit.read_text()
    assert "watch --foreground --stay" in text
    assert f"CAPTURE_HOME={run_capture.home}" in text  # type: ignore[attr-defined]
    if sys.platform != "darwin":
        assert "systemctl --user" in done.stdout
        exec_line = next(x for x in text.splitlines() if x.startswith("ExecStart="))
        argv = exec_line.removeprefix("ExecStart=").split()
        assert Path(argv[0]).exists()  # an absolute command the service manager can run
    again = run_capture("install", "watcher", env=env, check=True)
    assert "nothing to change" in again.stdout
    run_capture("uninstall", "watcher", env=env, check=True)
    assert not unit.exists() and not list(unit.parent.iterdir())


def test_the_launchd_agent_is_a_valid_plist() -> None:
    text = service_text("darwin", ["/opt/capture/bin/capture"], {"CAPTURE_HOME": "/tmp/a&b"})
    plist = plistlib.loads(text.encode())
    assert plist["ProgramArguments"] == [
        "/opt/capture/bin/capture",
        "watch",
        "--foreground",
        "--stay",
    ]
    assert plist["EnvironmentVariables"] == {"CAPTURE_HOME": "/tmp/a&b"}
    assert plist["KeepAlive"] is True and plist["RunAtLoad"] is True


def test_doctor_shows_the_running_watcher(tmp_path: Path, run_capture: RunCapture) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    run_capture("doctor", check=True)  # makes the database
    state = json.loads(run_capture("doctor", "--json", check=True).stdout)["watcher"]
    assert state["running"] is False
    with stopping_watchers(home):
        proc = subprocess.Popen(
            [sys.executable, "-m", "capture", "watch", "--stay"],
            env=capture_env(home, CAPTURE_WATCHER="on"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: watcher_pid(home) == proc.pid, "the watcher to start", 30)
        wait_for(lambda: (home / "state" / "watcher.json").exists(), "its status", 30)
        state = json.loads(run_capture("doctor", "--json", check=True).stdout)["watcher"]
        assert state["running"] is True and state["pid"] == proc.pid
        assert state["files"] == 0 and state["folders"] == []
        text = run_capture("doctor", check=True).stdout
        assert f"watcher   running (pid {proc.pid}) since" in text
        # a second one gives way to it
        second = subprocess.run(
            [sys.executable, "-m", "capture", "watch", "--foreground"],
            env=capture_env(home),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 0 and "already runs" in second.stderr
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    state = json.loads(run_capture("doctor", "--json", check=True).stdout)["watcher"]
    assert state["running"] is False and state["stopped_at"] is not None
