"""Real Neovim (Debian's, headless) starts `capture serve` through editors/neovim, edits buffers,
and the outcomes recorded are those of the edits made."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, capture_env, missing_tool

ORIGINAL = "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2]))\n"
NVIM = shutil.which("nvim")


@pytest.fixture(autouse=True)
def _needs_neovim() -> None:
    if NVIM is None:
        missing_tool("neovim is not installed (.ci/apt-packages)")


def nvim_version() -> str:
    out = subprocess.run([NVIM or "nvim", "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0]


def test_neovim_session(tmp_path: Path, capture_home: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in ("kept.py", "edited.py", "undone.py"):
        (root / name).write_text(ORIGINAL)
    env = capture_env(
        capture_home,
        CAPTURE_TEST_ROOT=str(root),
        CAPTURE_TEST_PYTHON=sys.executable,
    )
    result = subprocess.run(
        [
            NVIM or "nvim",
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "--cmd",
            f"set rtp^={ROOT / 'editors' / 'neovim'}",
            "-c",
            f"luafile {ROOT / 'tests' / 'editors' / 'nvim_session.lua'}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=root,
    )
    assert result.returncode == 0, f"{nvim_version()}: {result.stderr}"
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    try:
        rows = {
            path: (outcome, agent)
            for path, outcome, agent in conn.execute("SELECT path, outcome, agent FROM proposals")
        }
        undo_events = conn.execute("SELECT count(*) FROM events WHERE kind = 'undo'").fetchone()[0]
    finally:
        conn.close()
    assert rows == {
        "kept.py": ("kept", "nvim-agent"),
        "edited.py": ("edited", "nvim-agent"),
        "undone.py": ("undone", "nvim-agent"),
    }
    assert undo_events == 1
    assert (root / "kept.py").read_text().startswith("# reviewed\n")
