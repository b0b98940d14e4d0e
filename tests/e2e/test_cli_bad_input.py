"""Bad input to `capture propose` gets one clear line and leaves the database as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capture.connection import sqlite3
from tests.conftest import RunCapture


def snapshot(home: Path) -> list[tuple]:
    conn = sqlite3.connect(home / "data" / "capture.db")
    try:
        return [
            (table, conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("events", "episodes", "proposals", "hunks", "checkpoints")
        ]
    finally:
        conn.close()


@pytest.fixture
def workspace(tmp_path: Path, run_capture: RunCapture) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "ok.py").write_text("x = 1\n")
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02binary\x00" * 100)
    body = {"file": "ok.py", "old_text": "x = 0\n", "new_text": "x = 1\n"}
    assert run_capture("propose", input=json.dumps(body), cwd=ws).returncode == 0
    return ws


CASES = {
    "not json": (b"{this is not json", "not JSON"),
    "empty": (b"", "no input"),
    "not an object": (b"[1, 2]", "JSON object"),
    "missing file": (
        json.dumps({"file": "nope.py", "old_text": "a", "new_text": "b"}).encode(),
        "no such file",
    ),
    "binary file": (
        json.dumps({"file": "blob.bin", "old_text": "a", "new_text": "b"}).encode(),
        "not a UTF-8 text file",
    ),
    "unknown fields": (
        json.dumps({"file": "ok.py", "new_text": "x", "colour": "blue"}).encode(),
        "unknown field(s): colour",
    ),
    "outside workspace": (
        json.dumps({"file": "/etc/hostname", "new_text": "x", "workspace": "."}).encode(),
        "outside the workspace",
    ),
    "bad state": (
        json.dumps({"file": "ok.py", "new_text": "x", "state": "maybe"}).encode(),
        "state",
    ),
    "50 MB body": (
        b'{"file": "ok.py", "new_text": "' + b"x" * (50 * 1024 * 1024) + b'"}',
        "too large",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_and_changes_nothing(
    case: str, workspace: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    body, message = CASES[case]
    before = snapshot(capture_home)
    result = run_capture("propose", input=body, cwd=workspace)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("capture: error:") and message in lines[0]
    assert "Traceback" not in result.stderr
    assert snapshot(capture_home) == before


def test_debug_shows_the_traceback(workspace: Path, run_capture: RunCapture) -> None:
    result = run_capture("--debug", "propose", input=b"nope", cwd=workspace)
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_version_and_doctor(run_capture: RunCapture) -> None:
    from capture import __version__

    assert run_capture("--version").stdout.strip() == f"agent-capture {__version__}"
    doctor = run_capture("doctor", "--json", check=True)
    report = json.loads(doctor.stdout)
    assert report["database"]["integrity"] == "ok"
    assert report["database"]["journal_mode"] == "wal"
    assert report["windows"] == ["300ms", "600ms", "1s"]
