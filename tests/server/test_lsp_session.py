"""`capture serve` end to end: a pytest-lsp client over a real pipe, outcomes read from the DB."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from tests.support.lspkit import Editor, query, session, settled

pytestmark = pytest.mark.asyncio

ORIGINAL = "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2]))\n"
OLD = "    return 0\n"
NEW = "    result = 0\n    for item in items:\n        result += item\n    return result\n"

#: A file no editor holds is read on disk (`disk-late` when a busy machine delayed the read).
DISK = {"disk", "disk-late"}


def workspace(tmp_path: Path, *names: str, text: str = ORIGINAL) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in names:
        (root / name).write_text(text, newline="")
    return root


def checkpoint_vias(home: Path) -> dict[str, set[str]]:
    """How each file's window checkpoints were measured: in the editor's buffer or on disk."""
    vias: dict[str, set[str]] = {}
    for row in query(
        home,
        "SELECT p.path, c.via FROM checkpoints c JOIN proposals p ON p.id = c.proposal_id "
        "WHERE c.window != 'late'",
    ):
        vias.setdefault(row["path"], set()).add(row["via"])
    return vias


async def test_kept_edited_undone_through_the_editor(tmp_path: Path, capture_home: Path) -> None:
    root = workspace(tmp_path, "kept.py", "edited.py", "undone.py")
    async with session(capture_home, root) as editor:
        uris = {name: editor.open(root / name) for name in ("kept.py", "edited.py", "undone.py")}
        starts = {
            name: editor.agent_edit(uri, OLD, NEW, id=f"p-{name}", sessionId="s1", turnId="t1")
            for name, uri in uris.items()
        }
        # The user rewrites most of one edit, keystroke by keystroke, without saving...
        edited = uris["edited.py"]
        body = starts["edited.py"] + NEW.index("for item")
        editor.replace(edited, body, body + len("for item in items:"), "")
        editor.type(edited, body, "while items:")
        editor.replace(edited, body + 12 + 1, body + 12 + 1 + len("        result += item"), "")
        editor.type(edited, body + 13, "        result += items.pop()")
        # ...undoes another (the old text is back, as an editor's undo leaves it)...
        undone = uris["undone.py"]
        start = starts["undone.py"]
        editor.replace(undone, start, start + len(NEW), OLD)
        editor.client.protocol.notify(
            "capture/undo", {"uri": undone, "version": editor.versions[undone], "reason": "undo"}
        )
        # ...and types in front of the kept one, which moves it.
        editor.type(uris["kept.py"], 0, "# reviewed\n")
        for name in ("kept.py", "edited.py"):
            editor.save(root / name)
        editor.close(root / "edited.py")
        rows = await settled(capture_home, 3)
        stats = await editor.stats()
    assert rows["kept.py"]["outcome"] == "kept"
    assert rows["kept.py"]["similarity"] == 1.0
    assert rows["edited.py"]["outcome"] == "edited"
    assert 0.1 <= rows["edited.py"]["retention"] < 1.0
    assert rows["undone.py"]["outcome"] == "undone"
    assert {r["agent"] for r in rows.values()} == {"test-agent"}
    assert len({r["episode_id"] for r in rows.values()}) == 1  # one turn: one episode
    # The open buffers were measured in the editor; the closed one on disk.
    vias = checkpoint_vias(capture_home)
    assert vias["kept.py"] == {"editor"}
    assert vias["undone.py"] == {"editor"}
    assert vias["edited.py"] and vias["edited.py"] <= DISK  # late on a busy machine: disk-late
    # What the server mirrored is what the editor holds.
    baselines = {
        r["path"]: r["text"] for r in query(capture_home, "SELECT path, text FROM tracked_files")
    }
    assert baselines["kept.py"] == editor.texts[uris["kept.py"]]
    assert baselines["undone.py"] == editor.texts[uris["undone.py"]]
    assert baselines["edited.py"] == (root / "edited.py").read_text()
    undo = query(capture_home, "SELECT payload FROM events WHERE kind = 'undo'")
    assert len(undo) == 1 and rows["undone.py"]["id"] in undo[0]["payload"]
    assert stats["outcomes"]["kept"] == 1
    assert stats["outcomes"]["edited"] == 1
    assert stats["outcomes"]["undone"] == 1
    assert stats["server"]["errors"] == 0
    # The status-bar figures are the personal report's, for today.
    assert "kept" in stats["line"]
    assert stats["report"]["proposals"]["applied"] == 3


async def test_shown_then_decided(tmp_path: Path, capture_home: Path) -> None:
    root = workspace(tmp_path, "a.py", "b.py")
    async with session(capture_home, root) as editor:
        a = editor.open(root / "a.py")
        b = editor.open(root / "b.py")
        for uri, name in ((a, "a"), (b, "b")):
            editor.client.protocol.notify(
                "capture/proposal",
                {"uri": uri, "id": name, "state": "shown", "oldText": OLD, "newText": NEW},
            )
        # Accepted: the editor applies it, then says so.
        start = editor.texts[a].index(OLD)
        editor.replace(a, start, start + len(OLD), NEW)
        editor.client.protocol.notify("capture/decision", {"id": "a", "accepted": True})
        editor.client.protocol.notify(
            "capture/decision", {"id": "b", "accepted": False, "decidedBy": "config"}
        )
        rows = await settled(capture_home, 2)
    assert rows["a.py"]["state"] == "applied"
    assert rows["a.py"]["outcome"] == "kept"
    assert rows["a.py"]["decided_by"] == "user"
    assert rows["b.py"]["state"] == "rejected"
    assert rows["b.py"]["outcome"] == "rejected"
    assert rows["b.py"]["decided_by"] == "config"


async def test_proposal_recorded_by_another_process(
    tmp_path: Path, capture_home: Path, run_capture
) -> None:
    """A hook command records an edit of an open file: the server picks it up and follows it in
    the unsaved buffer; an edit of a closed file is followed on disk."""
    root = workspace(tmp_path, "open.py", "closed.py")
    async with session(capture_home, root) as editor:
        uri = editor.open(root / "open.py")
        for name in ("open.py", "closed.py"):
            (root / name).write_text(ORIGINAL.replace(OLD, NEW))
            body = {"file": str(root / name), "old_text": OLD, "new_text": NEW, "agent": "hook"}
            run_capture("propose", input=json.dumps(body), cwd=root, check=True)
        # The editor reloads the file the agent wrote (as Neovim or Emacs do), then the user
        # deletes the agent's lines without saving.
        editor.replace(uri, 0, len(editor.texts[uri]), ORIGINAL.replace(OLD, NEW))
        stats = await wait_for_tracking(editor, 2)
        assert stats["tracking"]["inEditor"] == 1 and stats["tracking"]["onDisk"] == 1
        start = editor.texts[uri].index(NEW)
        editor.replace(uri, start, start + len(NEW), "")
        closed = root / "closed.py"
        closed.write_text(closed.read_text().replace("result += item", "result += item * 2"))
        rows = await settled(capture_home, 2)
    assert rows["open.py"]["outcome"] == "undone"
    assert rows["closed.py"]["outcome"] in ("kept", "edited")
    assert rows["closed.py"]["similarity"] < 1.0
    vias = checkpoint_vias(capture_home)
    assert vias["open.py"] == {"editor"}
    assert vias["closed.py"] and vias["closed.py"] <= DISK


async def wait_for_tracking(editor: Editor, count: int) -> dict:
    """Stats once the server tracks ``count`` proposals (picked up within a second)."""
    for _ in range(50):
        stats = await editor.stats()
        if stats["tracking"]["live"] >= count:
            return stats
        await asyncio.sleep(0.1)
    raise AssertionError(f"the server did not pick up {count} proposals: {stats}")
