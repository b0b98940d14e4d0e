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


def make_project(tmp_path: Path, names: tuple[str, ...]) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in names:
        (root / name).write_text(ORIGINAL)
    return root


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


REWRITES = ("rewritten.py", "wrapped.py", "reverted.py")
#: What a user would expect of each proposal once the agent's `sum(items)` has been typed over
#: (rewritten), wrapped in `int(...)`, or retyped back to `0`.
REWRITE_OUTCOMES = {
    "rewritten.py": {"edited"},
    "wrapped.py": {"kept", "edited"},
    "reverted.py": {"undone"},
}


def recorded_proposals(capture_home: Path) -> dict[str, dict[str, object]]:
    """Each proposal's row (by path), with its hunks' regions."""
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    conn.row_factory = sqlite3.Row
    try:
        rows = {}
        for row in conn.execute(
            "SELECT id, path, agent, model, state, outcome, reason, similarity, retention"
            " FROM proposals"
        ):
            hunks = conn.execute(
                "SELECT old_text, new_text, region_start, region_end, status FROM hunks"
                " WHERE proposal_id = ? ORDER BY idx",
                (row["id"],),
            ).fetchall()
            rows[row["path"]] = {**dict(row), "hunks": [dict(h) for h in hunks]}
        return rows
    finally:
        conn.close()


def rewrite_problems(root: Path, rows: dict[str, dict[str, object]], agent: str) -> list[str]:
    problems = []
    if set(rows) != set(REWRITES):
        problems.append(f"proposals recorded for {sorted(rows)}, expected {sorted(REWRITES)}")
    for name, expected in REWRITE_OUTCOMES.items():
        row = rows.get(name)
        if row is None:
            continue
        if row["outcome"] not in expected:
            problems.append(
                f"{name}: outcome {row['outcome']!r}, expected one of {sorted(expected)}"
            )
        if not row["reason"]:
            problems.append(f"{name}: no reason recorded")
        if row["agent"] != agent:
            problems.append(f"{name}: agent {row['agent']!r}")
    for name in REWRITES:
        if (root / name).read_text() != ORIGINAL:
            problems.append(f"{name} was saved: {(root / name).read_text()!r}")
    return problems


def test_emacs_rewrites_judged_unsaved(tmp_path: Path, capture_home: Path) -> None:
    """The agent replaces one expression; the user types over it, wraps it, or retypes the old
    text, and never saves: the outcomes are those of the unsaved buffers."""
    root = make_project(tmp_path, REWRITES)
    result = run_emacs(root, capture_home, "emacs_rewrites.el")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = recorded_proposals(capture_home)
    problems = rewrite_problems(root, rows, "emacs-agent")
    assert not problems, "\n".join([*problems, "recorded:", *map(repr, rows.values())])
