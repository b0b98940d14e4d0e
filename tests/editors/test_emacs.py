"""Real Emacs (emacs-nox with Debian's elpa-eglot, batch) starts `capture serve` through
editors/emacs, edits buffers, and the outcomes recorded are those of the edits made."""

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

EMACS = shutil.which("emacs")
ELPA = Path("/usr/share/emacs/site-lisp/elpa")


@pytest.fixture(autouse=True)
def _needs_emacs() -> None:
    if EMACS is None:
        missing_tool("emacs is not installed (.ci/apt-packages)")


def run_emacs(root: Path, capture_home: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Load tests/editors/SCRIPT in a batch Emacs with eglot and editors/emacs on its path."""
    env = capture_env(capture_home, CAPTURE_TEST_ROOT=str(root), CAPTURE_TEST_PYTHON=sys.executable)
    return subprocess.run(
        [
            EMACS or "emacs",
            "--batch",
            "-Q",
            # Debian's elpa-* packages, as `package-initialize' would find them.
            "--eval",
            "(progn (require 'package) (add-to-list 'package-directory-list "
            f'"{ELPA}") (package-initialize))',
            "-L",
            str(ROOT / "editors" / "emacs"),
            "-l",
            str(ROOT / "tests" / "editors" / script),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=root,
    )


def test_emacs_eglot_session(tmp_path: Path, capture_home: Path) -> None:
    root = make_project(tmp_path, ("kept.py", "edited.py", "undone.py"))
    result = run_emacs(root, capture_home, "emacs_session.el")
    assert result.returncode == 0, result.stderr[-3000:]
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
        "kept.py": ("kept", "emacs-agent"),
        "edited.py": ("edited", "emacs-agent"),
        "undone.py": ("undone", "emacs-agent"),
    }
    assert undo_events == 1
    assert (root / "kept.py").read_text().startswith("# reviewed\n")


def test_emacs_rewrites_judged_unsaved(tmp_path: Path, capture_home: Path) -> None:
    """The agent replaces one expression; the user types over it, wraps it, or retypes the old
    text, and never saves: the outcomes are those of the unsaved buffers."""
    root = make_project(tmp_path, REWRITES)
    result = run_emacs(root, capture_home, "emacs_rewrites.el")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = recorded_proposals(capture_home)
    problems = rewrite_problems(root, rows, "emacs-agent")
    assert not problems, "\n".join([*problems, "recorded:", *map(repr, rows.values())])
