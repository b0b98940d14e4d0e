"""Real Emacs (emacs-nox with Debian's elpa-eglot, batch) starts `capture serve` through
editors/emacs, edits buffers, and the outcomes recorded are those of the edits made."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, capture_env, missing_tool

ORIGINAL = "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2]))\n"
EMACS = shutil.which("emacs")
ELPA = Path("/usr/share/emacs/site-lisp/elpa")


@pytest.fixture(autouse=True)
def _needs_emacs() -> None:
    if EMACS is None:
        missing_tool("emacs is not installed (.ci/apt-packages)")


def test_emacs_eglot_session(tmp_path: Path, capture_home: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in ("kept.py", "edited.py", "undone.py"):
        (root / name).write_text(ORIGINAL)
    env = capture_env(capture_home, CAPTURE_TEST_ROOT=str(root), CAPTURE_TEST_PYTHON=sys.executable)
    result = subprocess.run(
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
            str(ROOT / "tests" / "editors" / "emacs_session.el"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=root,
    )
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
