"""With no `capture` installed, the extension says so once, with how to install it, and the
editor works as before."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.vscode.codeserver import CodeServer, needs_vscode, read_trace, run_driver

pytestmark = pytest.mark.slow


def test_missing_capture_one_notification(tmp_path: Path, capture_home: Path) -> None:
    needs_vscode()
    ws = tmp_path / "project"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "app.py").write_text("print('hello')\n")
    base = tmp_path / "vscode"
    base.mkdir()
    # No `capture` on this PATH nor in the workspace; VSCODE_CLI=1 makes the extension host
    # keep this PATH instead of the login shell's.
    env = {"PATH": "/usr/bin:/bin", "VSCODE_CLI": "1"}
    with CodeServer(base, capture_home, env=env) as server:
        seen = run_driver(
            "missing.js", server, {"folder": str(ws.resolve()), "file": "app.py", "typed": "# ok\n"}
        )
        trace = read_trace(server)
    ours = [m for m in seen["notifications"] if "agent-capture" in m]
    assert len(ours) == 1, seen
    assert "`capture` program was not found" in ours[0] and "pipx install agent-capture" in ours[0]
    assert seen["statusBar"] is None and seen["servers"] == [], seen
    assert (ws / "app.py").read_text() == "print('hello')\n# ok\n"
    # the package without a server looks for its bundled one first, finds none, then says so
    events = ["activate", "bundled", "missing", "deactivate"]
    assert [e["event"] for e in trace] == events[: len(trace)]
    assert not [e for e in trace if e["event"] == "bundled" and e.get("bundled")]
    assert not (capture_home / "data" / "capture.db").exists()
