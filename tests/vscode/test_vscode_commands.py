"""The extension's commands in a real VS Code: sync enabled and disabled for the workspace
after a confirmation that says what would leave, and `capture install` for the agent the
workspace shows."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.vscode.codeserver import CodeServer, link_project_venv, needs_vscode, run_driver

pytestmark = pytest.mark.slow

COLLECTOR = "http://127.0.0.1:9"  # never contacted: enabling sends nothing


def test_sync_and_install_commands(tmp_path: Path, capture_home: Path) -> None:
    needs_vscode()
    ws = tmp_path / "project"
    (ws / ".claude").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "app.py").write_text("print('hello')\n")
    link_project_venv(ws)
    ws = ws.resolve()
    base = tmp_path / "vscode"
    base.mkdir()
    settings = {"agentCapture.sync.url": COLLECTOR, "agentCapture.sync.level": "metrics"}
    with CodeServer(base, capture_home, settings=settings) as server:
        seen = run_driver("commands.js", server, {"folder": str(ws), "token": "tok-123"})
    assert str(ws) in seen["enableDialog"], seen
    assert 'Level "metrics"' in seen["enableDialog"] and COLLECTOR in seen["enableDialog"]
    assert "Nothing is sent yet" in seen["enableDialog"]
    assert seen["enabled"].startswith(f"agent-capture: sync enabled for {ws} at level metrics")
    enabled = seen["afterEnable"]
    assert enabled["url"] == COLLECTOR, enabled
    assert [w["root"] for w in enabled["workspaces"]] == [str(ws)], enabled
    assert "queued episodes" in seen["disableDialog"].lower() or "dropped" in seen["disableDialog"]
    assert seen["disabled"].startswith(f"agent-capture: sync disabled for {ws}")
    assert seen["afterDisable"]["workspaces"] == [], seen["afterDisable"]
    # The agent found in the workspace was offered first and picked; its hooks are in place.
    assert "claude-code" in seen["picks"][0]["text"] and seen["picks"][0]["checked"], seen
    hooks = json.loads(seen["installed"])["hooks"]
    assert "PostToolUse" in hooks and "capture" in json.dumps(hooks["PostToolUse"])
    # The token was typed, never shown or logged.
    assert not any("tok-123" in m for m in seen["notifications"])
    logs = "".join(p.read_text() for p in (base / "user").rglob("*agent-capture.log"))
    assert "tok-123" not in logs and "--token ***" in logs
