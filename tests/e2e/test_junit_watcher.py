"""`capture junit --watch` records the JUnit reports that appear in a workspace's report
paths, once per run, and leaves alone the reports of runs recorded by `capture run` or the
pytest plugin. `capture junit FILE` records given reports."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import RunCapture, capture_env, episodes_json
from tests.support.projects import LONG_WINDOWS, agent_edit, make_project, pytest_cmd

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "junit"


class Watcher:
    """`capture junit --watch` as a real process, its log lines collected as they come."""

    def __init__(self, ws: Path, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "capture", "junit", "--watch"],
            cwd=ws,
            env=capture_env(home, **LONG_WINDOWS),
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.wait_for("watching")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, count: int = 1, timeout: float = 20.0) -> list[str]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = [line for line in self.lines if text in line]
            if len(found) >= count:
                return found
            time.sleep(0.1)
        raise AssertionError(f"no {count}x {text!r} in {self.lines}")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=20)


def test_watching_report_paths(tmp_path: Path, capture_home: Path, run_capture: RunCapture) -> None:
    ws = make_project(tmp_path)
    agent_edit(run_capture, ws, "src/calc.py", "a + b\n", "a + b + 1\n", "claude-code", "t1")
    watcher = Watcher(ws, capture_home)
    try:
        # A plain pytest run writing into a report directory that does not exist yet.
        cmd = pytest_cmd(plugin=False)
        cmd.insert(-1, "--junitxml=test-results/pytest.xml")
        env = capture_env(capture_home, **LONG_WINDOWS)
        assert subprocess.run(cmd, cwd=ws, env=env, capture_output=True).returncode == 1
        watcher.wait_for("recorded test-results/pytest.xml")

        # Maven writes one file per test class: one run.
        reports = ws / "target" / "surefire-reports"
        reports.mkdir(parents=True)
        for f in sorted((FIXTURES / "surefire").glob("*.xml")):
            shutil.copy(f, reports / f.name)
        watcher.wait_for("recorded target/surefire-reports/")

        # A broken report: one warning, and the watcher carries on.
        (ws / "junit-broken.xml").write_text("<testsuite><testcase")
        watcher.wait_for("junit-broken.xml: malformed XML")

        # Runs recorded by `capture run` or by the plugin are not recorded twice.
        wrapped = pytest_cmd(plugin=False)
        wrapped.insert(-1, "--junitxml=junit-wrapped.xml")
        assert run_capture("run", "--", *wrapped, cwd=ws, env=LONG_WINDOWS).returncode == 1
        plugin = pytest_cmd(plugin=True)
        plugin.insert(-1, "--junitxml=junit-plugin.xml")
        assert subprocess.run(plugin, cwd=ws, env=env, capture_output=True).returncode == 1
        watcher.wait_for("already recorded")
        time.sleep(2.5)  # past the watcher's quiet period
    finally:
        assert watcher.stop() == 0

    (episode,) = episodes_json(run_capture)
    runs = [(r["source"], r["runner"], r["passed"], r["failed"]) for r in episode["test_runs"]]
    assert runs == [
        ("junit-file", "pytest", 1, 1),
        ("junit-file", "surefire", 2, 1),
        ("wrapper", "pytest", 1, 1),
        ("pytest-plugin", "pytest", 1, 1),
    ]
    assert [r["link"] for r in episode["test_runs"]] == ["open"] * 4
    assert episode["test_runs"][0]["report"] == "test-results/pytest.xml"
    assert episode["test_runs"][0]["status"] == "failing"
    assert len([line for line in watcher.lines if "warning" in line]) == 1


def test_recording_given_report_files_once(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = make_project(tmp_path)
    agent_edit(run_capture, ws, "src/calc.py", "a + b\n", "a + b + 1\n", "claude-code", "t1")
    report = ws / "report.xml"
    shutil.copy(FIXTURES / "go-junit-report.xml", report)
    first = run_capture("junit", "report.xml", cwd=ws, env=LONG_WINDOWS, check=True)
    again = run_capture("junit", "report.xml", cwd=ws, env=LONG_WINDOWS, check=True)
    assert first.stdout == again.stdout
    (episode,) = episodes_json(run_capture)
    (run,) = episode["test_runs"]
    assert (run["runner"], run["passed"], run["failed"], run["skipped"]) == ("go", 4, 1, 1)
    assert run["exit_code"] is None and run["status"] == "failing"

    (ws / "notes.xml").write_text("<notes/>")
    bad = run_capture("junit", "notes.xml", cwd=ws)
    assert bad.returncode == 2
    assert bad.stderr.strip() == "capture: error: no JUnit results in the given file(s)"
