"""A client's mistakes are warnings, not errors: a notification without params, a decision
for an id never reported, `exit` sent right behind `shutdown`. Tracebacks are for our own
bugs; the log of such a session holds none, and the server still exits 0."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.rawlsp import RawClient, frame

METHODS = (
    "capture/proposal",
    "capture/decision",
    "capture/testRun",
    "capture/undo",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "workspace/didChangeWorkspaceFolders",
    "workspace/didChangeWatchedFiles",
    "$/cancelRequest",
    "$/setTrace",
)


def test_client_mistakes_are_warnings_without_tracebacks(
    tmp_path: Path, capture_home: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    client = RawClient(capture_home)
    client.initialize(root)
    for method in METHODS:
        for params in ({}, {"params": None}, {"params": []}):
            client.send(frame({"jsonrpc": "2.0", "method": method, **params}))
    client.notify("capture/decision", {"proposalId": "never-reported", "accepted": True})
    stats = client.stats()
    assert stats["server"]["errors"] == 0
    assert stats["server"]["badMessages"] >= len(METHODS) * 3
    # exit right behind shutdown, without waiting for its answer
    client.send(
        frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
        + frame({"jsonrpc": "2.0", "method": "exit"})
    )
    assert client.process.wait(timeout=30) == 0
    log = (capture_home / "state" / "log" / "server.log").read_text()
    assert "Traceback" not in log
    assert " ERROR " not in log
    assert "never-reported" in log  # named, at WARNING
    assert "exit before the shutdown was answered" in log
