"""While an editor is open, JUnit reports written in its workspace become test runs linked to
the agent's edits: no wrapper, no `capture junit --watch` in another terminal."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

from tests.conftest import RunCapture, episodes_json
from tests.support.lspkit import query
from tests.support.rawlsp import RawClient

JEST = Path(__file__).resolve().parent.parent / "fixtures" / "junit" / "jest-junit.xml"
WINDOWS = {"CAPTURE_WINDOWS": "10m"}


def junit_runs(home: Path) -> list[dict[str, object]]:
    rows = query(home, "SELECT * FROM test_runs WHERE source = 'junit-file'")
    return [dict(r) for r in rows]


def wait_for_runs(home: Path, count: int, timeout: float = 15.0) -> list[dict[str, object]]:
    deadline = time.monotonic() + timeout
    while (runs := junit_runs(home)) and len(runs) < count or not runs:
        assert time.monotonic() < deadline, f"no {count} run(s) from reports in {timeout} s"
        time.sleep(0.1)
    return runs


def test_reports_written_in_the_workspace_are_recorded_once_and_linked(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src" / "sum.js").write_text("module.exports = (a, b) => a + b + 1;\n")
    body = {
        "file": "src/sum.js",
        "old_text": "a + b;\n",
        "new_text": "a + b + 1;\n",
        "agent": "claude-code",
        "session_id": "s1",
        "turn_id": "t1",
    }
    run_capture("propose", "--json", input=json.dumps(body), cwd=root, check=True, env=WINDOWS)
    # Two editors open on the same workspace: each watches, the report is recorded once.
    first = RawClient(capture_home, **WINDOWS)
    second = RawClient(capture_home, **WINDOWS)
    try:
        for client in (first, second):
            client.initialize(root / "src")  # a folder inside the work tree: its root is watched
        for client in (first, second):
            deadline = time.monotonic() + 10
            while client.stats()["server"]["reportWatchers"] != 1:
                assert time.monotonic() < deadline, "the server never started watching"
                time.sleep(0.05)

        # The report says its run took 0.92 s: the run is placed that long before the file
        # was written, which must be after the edit for the run to follow it.
        time.sleep(1.0)
        (root / "test-results").mkdir()
        shutil.copy(JEST, root / "test-results" / "jest.xml")
        (run,) = wait_for_runs(capture_home, 1)
        assert (run["passed"], run["failed"], run["errors"], run["skipped"]) == (2, 2, 0, 1)
        assert run["report"] == "test-results/jest.xml"
        time.sleep(2.0)  # both watchers' quiet period (1 s) has passed
        assert len(junit_runs(capture_home)) == 1

        # The runner wipes its output directory and writes it anew: still watched.
        shutil.rmtree(root / "test-results")
        time.sleep(0.6)
        (root / "test-results" / "unit").mkdir(parents=True)
        shutil.copy(JEST, root / "test-results" / "unit" / "jest.xml")
        runs = wait_for_runs(capture_home, 2)
        assert sorted(str(r["report"]) for r in runs) == [
            "test-results/jest.xml",
            "test-results/unit/jest.xml",
        ]
    finally:
        first.close()
        second.close()

    (episode,) = episodes_json(run_capture)
    linked = episode["test_runs"]
    assert [r["source"] for r in linked] == ["junit-file", "junit-file"]
    assert linked[0]["status"] == "failing"


def test_watching_reports_can_be_turned_off(tmp_path: Path, capture_home: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    client = RawClient(capture_home, CAPTURE_WATCH_JUNIT_REPORTS="0")
    try:
        client.initialize(root)
        assert client.stats()["server"]["reportWatchers"] == 0
    finally:
        client.close()
