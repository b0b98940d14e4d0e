"""A database with junk written into its middle: every command says so in one line and names
`capture doctor --repair`, which recovers every row SQLite can still read into a new file (the
damaged one kept), after which the report works again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from capture.connection import sqlite3
from tests.conftest import RunCapture, missing_tool

EVENTS = 3000


def _fill(home: Path, ws: Path, run_capture: RunCapture) -> None:
    for n in range(3):
        (ws / f"f{n}.py").write_text(f"x = {n}\n")
        body = {"file": f"f{n}.py", "new_text": f"x = {n}\n", "turn_id": f"t{n}"}
        run_capture("propose", input=json.dumps(body), cwd=ws, check=True)
    conn = sqlite3.connect(home / "data" / "capture.db")
    with conn:
        conn.executemany(
            "INSERT INTO events (at, kind, source, workspace, payload) VALUES (?, ?, ?, ?, ?)",
            [
                (1.0 + n, "test", "fill", None, json.dumps({"n": n, "pad": "x" * 400}))
                for n in range(EVENTS)
            ],
        )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")  # the whole database in the one file
    conn.close()


def _readable_one_by_one(db: Path) -> set[int]:
    """The rows a reader can still get at, each looked up by its own key."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    found = set()
    for rowid in range(1, EVENTS + 10):
        try:
            row = conn.execute("SELECT payload FROM events WHERE id = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            continue
        if row and json.loads(row[0]).get("n") is not None:
            found.add(json.loads(row[0])["n"])
    conn.close()
    return found


def _damage_the_middle(db: Path) -> None:
    size = db.stat().st_size
    page = 4096
    middle = (size // page // 2) * page
    with db.open("r+b") as f:
        f.seek(middle)
        f.write(os.urandom(page))


def assert_one_line_naming_repair(stderr: str) -> None:
    assert len(stderr.strip().splitlines()) == 1, stderr
    line = stderr.strip()
    assert line.startswith("capture: error:") and "capture doctor --repair" in line
    assert "internal error" not in line


def test_a_damaged_header_is_one_line_naming_repair(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    _fill(capture_home, ws, run_capture)
    db = capture_home / "data" / "capture.db"
    with db.open("r+b") as f:
        f.write(b"this is no longer SQLite")
    for command in (("episodes",), ("report", "--all"), ("show", "abc")):
        done = run_capture(*command)
        assert done.returncode != 0
        assert_one_line_naming_repair(done.stderr)


def test_repair_keeps_every_readable_row_and_the_report_works_after(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    if shutil.which("sqlite3") is None:
        missing_tool("the sqlite3 command-line program is not installed")
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    _fill(capture_home, ws, run_capture)
    db = capture_home / "data" / "capture.db"
    _damage_the_middle(db)
    readable = _readable_one_by_one(db)
    assert 0 < len(readable) < EVENTS  # the junk hit the events

    # the report reads no event: it may not meet the damage, but when it does, one line
    broken = run_capture("report", "--all")
    if broken.returncode != 0:
        assert_one_line_naming_repair(broken.stderr)
    doctor = run_capture("doctor", env={"NO_COLOR": "1"})
    assert doctor.returncode == 1
    (db_line,) = [x for x in doctor.stdout.splitlines() if "integrity" in x or "ERROR" in x]
    assert "capture doctor --repair" in db_line

    repaired = run_capture("doctor", "--repair", env={"NO_COLOR": "1"})
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "integrity ok" in repaired.stdout
    (kept,) = db.parent.glob("capture.db.damaged-*")
    assert kept.stat().st_size > 0

    conn = sqlite3.connect(db)
    seen = sorted(
        json.loads(p)["n"]
        for (p,) in conn.execute("SELECT payload FROM events WHERE kind = 'test'")
    )
    proposals = conn.execute("SELECT count(*) FROM proposals").fetchone()[0]
    conn.close()
    # one page of 4 KiB holds at most nine of these rows: the rest are all back
    # every row a reader could still get at is back, and only those
    assert len(set(seen)) == len(seen)
    assert set(seen) == readable, sorted(readable ^ set(seen))
    assert proposals == 3
    report = run_capture("report", "--all", env={"NO_COLOR": "1"})
    assert report.returncode == 0, report.stderr
    after = run_capture("doctor", "--json")
    assert json.loads(after.stdout)["database"]["integrity"] == "ok"


def test_repair_without_a_database_says_so(run_capture: RunCapture) -> None:
    if shutil.which("sqlite3") is None:
        pytest.skip("the sqlite3 command-line program is not installed")
    done = run_capture("doctor", "--repair")
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("capture: error:") and "no database to repair" in line
