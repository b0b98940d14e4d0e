"""Real Neovim (Debian's, headless) starts `capture serve` through editors/neovim, edits buffers,
and the outcomes recorded are those of the edits made."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from capture.connection import sqlite3
from tests.conftest import ROOT, capture_env, missing_tool
from tests.editors.sessions import (
    REWRITES,
    make_project,
    recorded_proposals,
    rewrite_problems,
)

NVIM = shutil.which("nvim")


@pytest.fixture(autouse=True)
def _needs_neovim() -> None:
    if NVIM is None:
        missing_tool("neovim is not installed (.ci/apt-packages)")


def nvim_version() -> str:
    out = subprocess.run([NVIM or "nvim", "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0]


def run_nvim(root: Path, capture_home: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run tests/editors/SCRIPT in a headless Neovim with the plugin on its runtime path."""
    env = capture_env(
        capture_home,
        CAPTURE_TEST_ROOT=str(root),
        CAPTURE_TEST_PYTHON=sys.executable,
    )
    return subprocess.run(
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
            f"luafile {ROOT / 'tests' / 'editors' / script}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=root,
    )


def test_neovim_session(tmp_path: Path, capture_home: Path) -> None:
    root = make_project(tmp_path, ("kept.py", "edited.py", "undone.py"))
    result = run_nvim(root, capture_home, "nvim_session.lua")
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


def test_neovim_rewrites_judged_unsaved(tmp_path: Path, capture_home: Path) -> None:
    """The agent replaces one expression; the user types over it, wraps it, or retypes the old
    text, and never saves: the outcomes are those of the unsaved buffers."""
    root = make_project(tmp_path, REWRITES)
    result = run_nvim(root, capture_home, "nvim_rewrites.lua")
    assert result.returncode == 0, f"{nvim_version()}: {result.stderr}"
    rows = recorded_proposals(capture_home)
    problems = rewrite_problems(root, rows, "nvim-agent")
    assert not problems, "\n".join([*problems, "recorded:", *map(repr, rows.values())])
