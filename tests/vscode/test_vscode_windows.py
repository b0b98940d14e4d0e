"""One `capture serve` per VS Code window: a reload starts no second server (the old one
stops), a second window has its own, closing that window stops it, and a server that dies is
started again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.vscode.codeserver import (
    CodeServer,
    capture_serve_pids,
    needs_vscode,
    run_driver,
)

pytestmark = pytest.mark.slow


def test_one_server_per_window(tmp_path: Path, capture_home: Path) -> None:
    needs_vscode()
    ws = tmp_path / "project"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "app.py").write_text("print('hello')\n")
    base = tmp_path / "vscode"
    base.mkdir()
    settings = {"agentCapture.statusBar.refreshSeconds": 1}
    # `capture` found on PATH (VSCODE_CLI=1: the extension host keeps this PATH rather than
    # the login shell's).
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env = {"PATH": path, "VSCODE_CLI": "1"}
    with CodeServer(base, capture_home, settings=settings, env=env) as server:
        steps = run_driver("windows.js", server, {"folder": str(ws.resolve())})
        # Every window closed, code-server still running: no server is left.
        left_while_running = capture_serve_pids(capture_home)
    first, reloaded, second = steps["first"], steps["reloaded"], steps["second"]
    assert first["live"] == [first["server"]], steps
    # The reload: a new extension host with one new server; the old window's server is gone.
    assert reloaded["host"] != first["host"] and reloaded["server"] != first["server"], steps
    assert reloaded["live"] == [reloaded["server"]] and not reloaded["firstAlive"], steps
    # A second window has its own server, and closing it stops that one only.
    assert sorted(second["live"]) == sorted([reloaded["server"], second["server"]]), steps
    assert steps["closed"]["live"] == [reloaded["server"]], steps
    # Killed, the server comes back for the same window, alone.
    restarted = steps["restarted"]
    assert restarted["host"] == reloaded["host"], steps
    assert restarted["live"] == [restarted["server"]] != [reloaded["server"]], steps
    assert "restart" in [e["event"] for e in steps["trace"]], steps
    assert steps["allClosed"]["live"] == [] and left_while_running == [], steps
    assert capture_serve_pids(capture_home) == []
