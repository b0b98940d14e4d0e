"""The extension in a real VS Code (code-server 4.100.3, the .vsix installed, driven through
Debian's chromium): an agent's hook edits three open files; the user rewrites one without saving
(selecting the agent's statement and typing a new one over it key by key), undoes another with
Ctrl+Z, and undoes then redoes the third. What the store recorded is what happened, and the
status bar shows the kept rate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from capture.connection import sqlite3
from tests.support.hook_support import TOTALS_AFTER, TOTALS_BEFORE, example
from tests.vscode.codeserver import CodeServer, link_project_venv, needs_vscode, run_driver

pytestmark = pytest.mark.slow

OLD_LINE = "    return round(subtotal * rate, 2)"
AGENT_LINE = '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)'
#: The user selects the agent's statement (Shift+Home from the line's end) and types a new one
#: over it, one change per key as VS Code sends them: the first key replaces the selection, each
#: later one is an insertion at the end of what was typed.
TYPED = "return subtotal * rate * 100 // 100"  # no bracket or quote: nothing auto-closes
USER_LINE = "    " + TYPED
ROLES = {"edited": "edited_totals.py", "undone": "undone_totals.py", "redone": "redone_totals.py"}


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "invoicer"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for name in ROLES.values():
        (ws / name).write_text(TOTALS_BEFORE)
    link_project_venv(ws)
    return ws.resolve()


def _payloads(ws: Path, base: Path) -> list[dict[str, str]]:
    """Claude Code's PostToolUse Edit example, once per file, as its hook receives it."""
    edits = []
    for i, name in enumerate(ROLES.values()):
        payload: dict[str, Any] = example("claude_code_posttooluse_edit.json", ws)
        target = str(ws / name)
        payload["tool_input"]["file_path"] = target
        payload["tool_response"]["filePath"] = target
        payload["tool_use_id"] = f"toolu_vscode_{i}"
        path = base / f"payload-{i}.json"
        path.write_text(json.dumps(payload))
        edits.append({"path": target, "after": TOTALS_AFTER, "payload": str(path)})
    return edits


def test_unsaved_rewrite_undo_and_redo_in_vscode(tmp_path: Path, capture_home: Path) -> None:
    needs_vscode()
    assert OLD_LINE in TOTALS_BEFORE and AGENT_LINE in TOTALS_AFTER
    ws = _workspace(tmp_path)
    base = tmp_path / "vscode"
    base.mkdir()
    settings = {"agentCapture.statusBar.refreshSeconds": 1, "agentCapture.logLevel": "INFO"}
    # Windows long enough for the keystrokes to land before the last checkpoint.
    env = {"CAPTURE_WINDOWS": "10s,20s,30s"}
    with CodeServer(base, capture_home, settings=settings, env=env) as server:
        seen = run_driver(
            "session.js",
            server,
            {
                "folder": str(ws),
                "open": list(ROLES.values()),
                "edits": _payloads(ws, base),
                "roles": ROLES,
                "oldLine": OLD_LINE,
                "agentLine": AGENT_LINE,
                "userLine": USER_LINE,
                "typed": TYPED,
                "agentLineNumber": TOTALS_AFTER.splitlines().index(AGENT_LINE) + 1,
            },
        )
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    conn.row_factory = sqlite3.Row
    try:
        proposals = {
            row["path"]: dict(row)
            for row in conn.execute("SELECT id, path, agent, outcome, reason FROM proposals")
        }
        undo_events = [
            json.loads(row["payload"])
            for row in conn.execute("SELECT payload FROM events WHERE kind = 'undo' ORDER BY id")
        ]
    finally:
        conn.close()
    outcomes = {path: row["outcome"] for path, row in proposals.items()}
    # Typed over key by key, the agent's line is rewritten, not removed.
    assert proposals[ROLES["edited"]]["reason"] == "rewritten", proposals
    assert outcomes == {
        ROLES["edited"]: "edited",
        ROLES["undone"]: "undone",
        ROLES["redone"]: "kept",
    }, proposals
    assert {row["agent"] for row in proposals.values()} == {"claude-code"}
    # Ctrl+Z in undone_totals.py, then Ctrl+Z and Ctrl+Shift+Z in redone_totals.py.
    by_file = [(Path(e["uri"]).name, e["reason"], e["proposals"]) for e in undo_events]
    assert by_file == [
        (ROLES["undone"], "undo", [proposals[ROLES["undone"]]["id"]]),
        (ROLES["redone"], "undo", [proposals[ROLES["redone"]]["id"]]),
        (ROLES["redone"], "redo", [proposals[ROLES["redone"]]["id"]]),
    ], undo_events
    # Nothing was saved: the rewrite was judged in the unsaved buffer.
    for name in ROLES.values():
        assert (ws / name).read_text() == TOTALS_AFTER
    assert ROLES["edited"] in " ".join(seen["dirty"])
    # One kept of three settled.
    assert seen["statusBar"] == "capture: 33% kept · 3 proposals · 0 tests", seen
    # Clicking it showed the report, which names the agent.
    assert "claude-code" in seen["report"], seen["report"]
