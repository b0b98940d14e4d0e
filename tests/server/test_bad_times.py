"""One bad time must not take the store down: a far-future `startedAt` from an editor is
recorded at the time received (and logged), and a time already stored that nothing can show
takes only its own row out of the reading commands, which `capture doctor` names."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from capture.connection import sqlite3
from tests.conftest import RunCapture
from tests.support.rawlsp import RawClient, change, proposal

TEXT = "".join(f"line {i}\n" for i in range(20))
FAR = "9999-12-31T23:59:59-23:59"


def reading_commands_work(run_capture: RunCapture, out: Path) -> list[dict[str, object]]:
    listed = run_capture("episodes", "--json", check=True)
    episodes: list[dict[str, object]] = json.loads(listed.stdout)
    run_capture("episodes", check=True)
    run_capture("report", check=True)
    run_capture("report", "--json", check=True)
    run_capture("show", str(episodes[0]["id"]), check=True)
    run_capture("export", "--format", "episodes,sft,agent-trace", "--out", str(out), check=True)
    run_capture("sync", "preview", check=True)
    return episodes


def test_a_far_future_test_run_leaves_every_reading_command_working(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    doc = root / "doc.py"
    doc.write_text(TEXT)
    client = RawClient(capture_home)
    try:
        client.initialize(root)
        uri = client.open(doc, TEXT)
        client.send(change(uri, 2, (1, 0), (2, 0), "new 1\n"))
        client.send(proposal(uri, "line 1\n", "new 1\n", 1))
        before = time.time()
        client.notify(
            "capture/testRun",
            {"command": "pytest", "name": "far", "exitCode": 0, "startedAt": FAR},
        )
        client.notify(
            "capture/testRun",
            {"command": "pytest", "name": "ancient", "exitCode": 1, "startedAt": 12.5},
        )
        assert client.stats()["testRuns"]["total"] == 2
    finally:
        assert client.close() == 0

    db = capture_home / "data" / "capture.db"
    conn = sqlite3.connect(db, timeout=30)
    try:
        starts = dict(conn.execute("SELECT name, started_at FROM test_runs").fetchall())
        # recorded, at the time received, not in year 10000 nor in 1970
        assert set(starts) == {"far", "ancient"}
        assert all(before - 5 <= at <= time.time() for at in starts.values())
    finally:
        conn.close()
    log = (capture_home / "state" / "log" / "server.log").read_text()
    assert "capture/testRun startedAt" in log and "outside 2000" in log

    episodes = reading_commands_work(run_capture, tmp_path / "out1")
    assert {r["name"] for r in episodes[0]["test_runs"]} == {"far", "ancient"}  # type: ignore[attr-defined]

    # A store written before the check (or by hand) holds the value: only its row goes.
    conn = sqlite3.connect(db, timeout=30)
    try:
        with conn:
            conn.execute("UPDATE test_runs SET started_at = 253402387139.0 WHERE name = 'far'")
            far_id = conn.execute("SELECT id FROM test_runs WHERE name = 'far'").fetchone()[0]
    finally:
        conn.close()
    episodes = reading_commands_work(run_capture, tmp_path / "out2")
    assert [r["name"] for r in episodes[0]["test_runs"]] == ["ancient"]  # type: ignore[index]
    assert len(episodes[0]["proposals"]) == 1  # type: ignore[arg-type]
    doctor = run_capture("doctor", check=True)
    assert f"test_runs {far_id} started_at" in doctor.stdout
    report = json.loads(run_capture("doctor", "--json", check=True).stdout)
    assert report["database"]["unreadable_times"] == [
        {"table": "test_runs", "id": far_id, "column": "started_at", "value": "253402387139.0"}
    ]
