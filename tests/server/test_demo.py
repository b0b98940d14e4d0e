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


def test_demo_keeps_its_data_where_the_user_can_open_it(
    run_capture: RunCapture, capture_home: Path, tmp_path: Path
) -> None:
    """Apart from the user's own database, said where, and what it says to run works there; a
    second demo starts afresh; --temporary leaves nothing."""
    result = run_capture("demo", env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    home = capture_home / "data" / "demo"
    assert f"The demo's data stays in {home}" in result.stdout
    assert not (capture_home / "data" / "capture.db").exists()  # the user's own: untouched
    look = [line.strip() for line in result.stdout.splitlines() if "capture report" in line]
    (report,) = look
    assert report == f"CAPTURE_HOME={home} capture report --all --today"
    oneline = run_capture(
        "report", "--all", "--today", "--oneline", env={"CAPTURE_HOME": str(home)}
    )
    assert oneline.stdout.startswith("3 proposed"), oneline.stdout
    again = run_capture("demo", env={"COLUMNS": "200"})
    assert again.returncode == 0, again.stderr
    conn = sqlite3.connect(home / "data" / "capture.db")
    try:
        assert conn.execute("SELECT count(*) FROM proposals").fetchone() == (3,)
    finally:
        conn.close()

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    result = run_capture("demo", "--temporary", env={"TMPDIR": str(temporary)})
    assert result.returncode == 0, result.stderr
    assert list(temporary.iterdir()) == []
