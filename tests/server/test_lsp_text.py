"""The server's mirror stays exact through the texts editors really hold: non-ASCII text in
each negotiated position encoding, CRLF line ends, and a 20,000-line document."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.lspkit import query, session, settled

pytestmark = pytest.mark.asyncio

# These tests check the mirror, not timing: windows long enough that, on a loaded machine, every
# keystroke and the agent's edit reach the server before the first checkpoint falls due.
WINDOWS = {"CAPTURE_WINDOWS": "2s,3s,4s"}


def project(tmp_path: Path, name: str, text: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / name).write_text(text, newline="")
    return root


def stored_region(home: Path, path: str) -> str:
    """The agent's hunk as the store sees it now: its region in the stored baseline text."""
    (row,) = query(
        home,
        "SELECT h.region_start AS s, h.region_end AS e, t.text FROM hunks h "
        "JOIN proposals p ON p.id = h.proposal_id JOIN tracked_files t "
        "ON t.workspace_id = p.workspace_id AND t.path = p.path WHERE p.path = ?",
        path,
    )
    lo, hi = sorted((row["s"], row["e"]))
    return str(row["text"][lo:hi])


def baseline(home: Path, path: str) -> str:
    (row,) = query(home, "SELECT text FROM tracked_files WHERE path = ?", path)
    return str(row["text"])


UNICODE = (
    "# 中文注释: emoji 😀 and more 🎉🎉\n"
    "greeting = '你好, 世界 🌍'\n"
    "def wave():\n"
    "    return '👋'\n"
    "# fin 🏁\n"
)
OLD_U = "    return '👋'\n"
NEW_U = "    hands = '👋🏽👋'  # 两只手\n    return hands + '🙌'\n"


@pytest.mark.parametrize("offered", [None, ["utf-8"], ["utf-32", "utf-16"], ["utf-16"]])
async def test_non_ascii_in_every_encoding(
    tmp_path: Path, capture_home: Path, offered: list[str] | None
) -> None:
    root = project(tmp_path, "uni.py", UNICODE)
    async with session(capture_home, root, encodings=offered, **WINDOWS) as editor:
        expected = offered[0] if offered else "utf-16"
        assert editor.encoding.value == expected
        uri = editor.open(root / "uni.py")
        start = editor.agent_edit(uri, OLD_U, NEW_U)
        # Typed around the region, on its own lines too: CJK, emoji (two UTF-16 units,
        # four UTF-8 bytes), combining marks.
        editor.type(uri, start, "# 改 🎈\n")
        end = editor.texts[uri].index(NEW_U) + len(NEW_U)
        editor.type(uri, end, "    # e\u0301t\u00e9 🚀\n")
        editor.type(uri, 2, "🔥")
        greeting = editor.texts[uri].index("世界")
        editor.replace(uri, greeting, greeting + 2, "🌏地球")
        stats = await editor.stats()
        assert stats["server"]["positionEncoding"] == expected
        rows = await settled(capture_home, 1, timeout=60.0)
    assert rows["uni.py"]["outcome"] == "kept"
    assert rows["uni.py"]["similarity"] == 1.0
    assert baseline(capture_home, "uni.py") == editor.texts[uri]
    assert stored_region(capture_home, "uni.py") == NEW_U


CRLF = "".join(f"line {i}\r\n" for i in range(30))
OLD_C = "line 10\r\nline 11\r\n"
NEW_C = "agent 10\r\n\r\nagent 11\r\nagent 12\r\n"


async def test_crlf_line_ends(tmp_path: Path, capture_home: Path) -> None:
    root = project(tmp_path, "crlf.txt", CRLF)
    async with session(capture_home, root, **WINDOWS) as editor:
        uri = editor.open(root / "crlf.txt")
        start = editor.agent_edit(uri, OLD_C, NEW_C)
        editor.type(uri, 0, "top\r\n")  # a new first line moves everything
        editor.type(uri, start + 5, "x\r\ny")  # a line split right before the region
        nine = editor.texts[uri].index("line 9\r\n")
        editor.replace(uri, nine + 6, nine + 8, " ")  # a line join right before it too
        after = editor.texts[uri].index(NEW_C) + len(NEW_C)
        editor.type(uri, after, "user\r\n")
        editor.save(root / "crlf.txt")
        rows = await settled(capture_home, 1, timeout=60.0)
    assert rows["crlf.txt"]["outcome"] == "kept"
    assert baseline(capture_home, "crlf.txt") == editor.texts[uri]
    assert "\r\n" in baseline(capture_home, "crlf.txt")
    assert stored_region(capture_home, "crlf.txt") == NEW_C


async def test_a_20000_line_document(tmp_path: Path, capture_home: Path) -> None:
    text = "".join(
        f"value_{i} = compute({i}, 'padding to a realistic width')\n" for i in range(20_000)
    )
    root = project(tmp_path, "big.py", text)
    old = "value_15000 = compute(15000, 'padding to a realistic width')\n"
    new = "value_15000 = cached(15000)\nassert value_15000 is not None\n"
    async with session(capture_home, root, **WINDOWS) as editor:
        uri = editor.open(root / "big.py")
        editor.agent_edit(uri, old, new)
        for i in range(50):
            editor.type(uri, editor.texts[uri].index(f"value_{100 + i} "), "#")
        editor.type(uri, editor.texts[uri].index(new) + len(new), "# after\n")
        lone = editor.texts[uri].index("value_15001 ")
        editor.replace(uri, lone, lone + 12, "")
        rows = await settled(capture_home, 1, timeout=60.0)
    assert rows["big.py"]["outcome"] == "kept"
    assert baseline(capture_home, "big.py") == editor.texts[uri]
    assert stored_region(capture_home, "big.py") == new
