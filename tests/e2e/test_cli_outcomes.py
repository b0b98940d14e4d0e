"""Through the command line with short windows: each outcome comes out right."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.conftest import RunCapture, episodes_json

ORIGINAL = "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2]))\n"
AGENT_BODY = "    result = 0\n    for item in items:\n        result += item\n    return result\n"


def make_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def agent_edit(ws: Path, name: str) -> Path:
    """Write the file as the agent left it: its body replaced."""
    path = ws / name
    path.write_text(ORIGINAL.replace("    return 0\n", AGENT_BODY))
    return path


def propose(run_capture: RunCapture, ws: Path, name: str, **fields: object) -> dict:
    body = {
        "file": name,
        "old_text": "    return 0\n",
        "new_text": AGENT_BODY,
        "agent": "claude-code",
        "model": "test-model",
        "session_id": "s1",
        "turn_id": "t1",
        **fields,
    }
    result = run_capture("propose", "--json", input=json.dumps(body), cwd=ws)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def settle(run_capture: RunCapture, ws: Path) -> None:
    deadline = time.time() + 20
    while time.time() < deadline:
        time.sleep(0.4)
        run_capture("observe", cwd=ws, check=True)
        proposals = [p for e in episodes_json(run_capture) for p in e["proposals"]]
        if all(p["outcome"] != "pending" for p in proposals):
            return
    raise AssertionError("proposals did not settle")


def test_each_outcome_through_the_cli(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = make_workspace(tmp_path)
    for name in ("kept.py", "edited.py", "undone.py", "lost.py"):
        agent_edit(ws, name)
        propose(run_capture, ws, name)
    propose(run_capture, ws, "rejected.py", state="rejected")
    (ws / "created.py").write_text(ORIGINAL)  # a file the agent wrote from nothing
    propose(run_capture, ws, "created.py", old_text="", new_text=ORIGINAL, created_file=True)

    # The user edits one file heavily, reverts another, deletes a third, and deletes the file
    # the agent created: that file is back as it was before the agent, absent.
    edited = ws / "edited.py"
    edited.write_text(
        edited.read_text().replace(
            "    for item in items:\n        result += item\n",
            "    result = sum(x for x in items if x is not None)  # simpler\n",
        )
    )
    (ws / "undone.py").write_text(ORIGINAL)
    (ws / "lost.py").unlink()
    (ws / "created.py").unlink()
    settle(run_capture, ws)

    (episode,) = episodes_json(run_capture)
    assert episode["agent"] == "claude-code"
    assert episode["session_id"] == "s1"
    assert episode["workspace"] == str(ws.resolve())
    outcomes = {p["file"]: p["outcome"] for p in episode["proposals"]}
    assert outcomes == {
        "kept.py": "kept",
        "edited.py": "edited",
        "undone.py": "undone",
        "lost.py": "lost",
        "rejected.py": "rejected",
        "created.py": "undone",
    }
    by_file = {p["file"]: p for p in episode["proposals"]}
    kept = by_file["kept.py"]
    assert kept["similarity"] == 1.0 and kept["retention"] == 1.0
    assert [c["window"] for c in kept["checkpoints"]] == ["300ms", "600ms", "1s", "late"]
    assert all(c["observed_at"] for c in kept["checkpoints"][:3])
    assert 0 < by_file["edited.py"]["similarity"] < 0.9
    assert by_file["undone.py"]["retention"] < 0.1
    assert kept["chars_added"] > 0 and kept["lines_added"] == 4
    assert episode["settled_at"] is not None


def test_user_keystrokes_inside_the_region_make_it_edited_not_undone(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    path = agent_edit(ws, "a.py")
    propose(run_capture, ws, "a.py")
    # Lines added above the region move it; a small tweak inside keeps it "kept".
    path.write_text("import os\n\n" + path.read_text().replace("result = 0", "result = 0 "))
    settle(run_capture, ws)
    (episode,) = episodes_json(run_capture)
    (proposal,) = episode["proposals"]
    assert proposal["outcome"] == "kept"
    assert 0.9 <= proposal["similarity"] < 1.0


def test_unified_diff_input_and_show(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = make_workspace(tmp_path)
    path = ws / "m.py"
    path.write_text("a = 1\nb = 2\nc = 3\n")
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n"
    path.write_text("a = 1\nb = 20\nc = 3\n")
    result = run_capture(
        "propose", "--json", input=json.dumps({"diff": diff, "agent": "codex"}), cwd=ws
    )
    assert result.returncode == 0, result.stderr
    ids = json.loads(result.stdout)
    shown = run_capture("show", ids["episode"], cwd=ws, check=True).stdout
    assert "m.py" in shown and "+b = 20" in shown and "-b = 2" in shown
    (episode,) = episodes_json(run_capture)
    assert episode["proposals"][0]["hunks"] == [
        {"old_text": "b = 2\n", "new_text": "b = 20\n", "status": "tracking"}
    ]


def test_pure_deletion_undone_when_old_text_returns(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    path = ws / "d.py"
    path.write_text("keep = 1\nlast = 3\n")
    body = {"file": "d.py", "old_text": "drop = 2\n", "new_text": "", "line": 2}
    assert run_capture("propose", input=json.dumps(body), cwd=ws).returncode == 0
    path.write_text("keep = 1\ndrop = 2\nlast = 3\n")
    settle(run_capture, ws)
    (episode,) = episodes_json(run_capture)
    assert episode["proposals"][0]["outcome"] == "undone"


def test_second_agent_edit_to_a_file_keeps_the_first_region_in_place(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    path = agent_edit(ws, "two.py")
    propose(run_capture, ws, "two.py")
    # The agent edits the same file again, above the first edit, before any checkpoint.
    path.write_text("import math\n\n\n" + path.read_text())
    second = {"file": "two.py", "old_text": "", "new_text": "import math\n\n\n", "line": 1}
    assert run_capture("propose", input=json.dumps(second), cwd=ws).returncode == 0
    settle(run_capture, ws)
    outcomes = {
        p["hunks"][0]["new_text"]: (p["outcome"], p["similarity"])
        for e in episodes_json(run_capture)
        for p in e["proposals"]
    }
    assert outcomes[AGENT_BODY] == ("kept", 1.0)
    assert outcomes["import math\n\n\n"] == ("kept", 1.0)
