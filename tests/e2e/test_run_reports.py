"""`capture run` reads the JUnit reports a command wrote: named on its command line, given with
--junit, or found in the usual report paths; a broken report costs one warning."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from tests.conftest import RunCapture, episodes_json
from tests.support.projects import LONG_WINDOWS, agent_edit, make_project

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "junit"
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]  # no plugin: see env


def project_with_edit(tmp_path: Path, run_capture: RunCapture) -> Path:
    ws = make_project(tmp_path)
    agent_edit(run_capture, ws, "src/calc.py", "a + b\n", "a + b + 1\n", "claude-code", "t1")
    return ws


def capture_lines(stderr: str) -> list[str]:
    """Our lines among the command's own stderr."""
    return [line for line in stderr.splitlines() if line.startswith("capture:")]


def runs(run_capture: RunCapture) -> list[dict]:
    (episode,) = episodes_json(run_capture)
    return episode["test_runs"]


def test_a_pytest_report_named_on_the_command_line(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = project_with_edit(tmp_path, run_capture)
    result = run_capture(
        "run", "--name", "unit", "--", *PYTEST, "--junitxml=out/junit.xml", "tests",
        cwd=ws, env=LONG_WINDOWS,
    )  # fmt: skip
    assert result.returncode == 1 and capture_lines(result.stderr) == []
    (run,) = runs(run_capture)
    assert run["results_from"] == "junit" and run["report"] == "out/junit.xml"
    assert run["runner"] == "pytest" and run["name"] == "unit"
    assert (run["passed"], run["failed"]) == (1, 1)
    assert run["failing_ids"] == ["tests.test_calc.test_add"]


def test_reports_in_the_usual_places_and_given_with_junit(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = project_with_edit(tmp_path, run_capture)
    surefire = " && ".join(
        f"cp {f} target/surefire-reports/" for f in sorted((FIXTURES / "surefire").glob("*.xml"))
    )
    script = f"mkdir -p target/surefire-reports && {surefire} && exit 1"
    assert run_capture("run", "--", "sh", "-c", script, cwd=ws, env=LONG_WINDOWS).returncode == 1
    go = f"mkdir -p out && cp {FIXTURES / 'go-junit-report.xml'} out/go.xml && exit 1"
    result = run_capture(
        "run", "--junit", "out/go.xml", "--", "sh", "-c", go, cwd=ws, env=LONG_WINDOWS
    )
    assert result.returncode == 1 and result.stderr == ""
    maven, gotest = runs(run_capture)
    assert (maven["runner"], maven["passed"], maven["failed"], maven["errors"]) == (
        "surefire",
        2,
        1,
        1,
    )
    assert maven["report"] == (
        "target/surefire-reports/TEST-com.example.CalcTest.xml, "
        "target/surefire-reports/TEST-com.example.OtherTest.xml"
    )
    assert (gotest["runner"], gotest["passed"], gotest["failed"], gotest["skipped"]) == (
        "go",
        4,
        1,
        1,
    )


def test_a_stale_report_is_not_read_again(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = project_with_edit(tmp_path, run_capture)
    shutil.copy(FIXTURES / "jest-junit.xml", ws / "junit.xml")  # left by an earlier run
    earlier = time.time() - 60
    os.utime(ws / "junit.xml", (earlier, earlier))
    result = run_capture("run", "--junit", "junit.xml", "--", "true", cwd=ws, env=LONG_WINDOWS)
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        f"capture: warning: --junit {(ws / 'junit.xml').resolve()}: this run did not write it"
    ]
    (run,) = runs(run_capture)
    assert run["results_from"] is None and run["status"] == "passing"


def test_a_broken_report_costs_one_warning_and_the_summary_is_used(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = project_with_edit(tmp_path, run_capture)
    broken = "mkdir -p test-results && printf '<testsuite><testcase' > test-results/r.xml"
    cmd = f"{broken} && {' '.join(PYTEST)} tests"
    result = run_capture("run", "--", "sh", "-c", cmd, cwd=ws, env=LONG_WINDOWS)
    assert result.returncode == 1
    warnings = capture_lines(result.stderr)
    assert len(warnings) == 1, warnings
    assert "test-results/r.xml: malformed XML" in warnings[0]
    assert warnings[0].endswith("its results were not read")
    (run,) = runs(run_capture)
    assert run["results_from"] == "summary" and (run["passed"], run["failed"]) == (1, 1)
