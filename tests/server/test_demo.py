"""`capture demo`, the README's first command: a real server driven through a scripted session."""

from __future__ import annotations

from pathlib import Path

from capture.connection import sqlite3
from tests.conftest import RunCapture


def test_demo_records_and_prints_the_session(run_capture: RunCapture, tmp_path: Path) -> None:
    home = tmp_path / "demo-home"
    result = run_capture("demo", "--home", str(home), env={"COLUMNS": "120"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for name, outcome in (("app.py", "kept"), ("text.py", "edited"), ("config.py", "undone")):
        line = next(line for line in out.splitlines() if f" {name} " in line)
        assert f" {outcome} " in line, line
    assert "pytest -q" in out
    conn = sqlite3.connect(home / "data" / "capture.db")
    try:
        outcomes = dict(conn.execute("SELECT path, outcome FROM proposals"))
        (linked,) = conn.execute("SELECT count(*) FROM episode_test_runs").fetchone()
        vias = {v for (v,) in conn.execute("SELECT via FROM checkpoints WHERE via IS NOT NULL")}
    finally:
        conn.close()
    assert outcomes == {"app.py": "kept", "text.py": "edited", "config.py": "undone"}
    assert linked == 1  # the test run followed the agent's episode
    assert vias == {"editor"}  # measured in the unsaved buffers


def test_demo_cleans_up_its_temporary_home(run_capture: RunCapture, tmp_path: Path) -> None:
    result = run_capture("demo", env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []
