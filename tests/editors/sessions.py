"""What the real-editor tests share: the project they open, and what a user would check once the
agent's expression has been typed over, wrapped, or typed back to the old text."""

from __future__ import annotations

import subprocess
from pathlib import Path

from capture.connection import sqlite3

ORIGINAL = "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2]))\n"


def make_project(tmp_path: Path, names: tuple[str, ...]) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in names:
        (root / name).write_text(ORIGINAL)
    return root


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
