"""The pytest plugin, in real pytest sessions: on where agent-capture is installed, off with
`-p no:agent_capture` or `-p no:capture`, and never the reason a session fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, RunCapture, capture_env, episodes_json
from tests.support.projects import (
    HEAVY_PLUGINS_OFF,
    LONG_WINDOWS,
    agent_edit,
    make_project,
    plugin_installed,
)

needs_install = pytest.mark.skipif(
    not plugin_installed(),
    reason="agent-capture is not installed in this environment (pip install -e .)",
)


def pytest_session(
    ws: Path, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "tests"]
    return subprocess.run(
        cmd,
        cwd=ws,
        env=capture_env(home, **{**LONG_WINDOWS, **(env or {})}),
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_install
def test_on_where_installed_off_on_request(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_project(tmp_path)
    agent_edit(run_capture, ws, "src/calc.py", "a + b\n", "a + b + 1\n", "claude-code", "t1")

    autoload = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": ""}  # entry points load, as by default
    on = pytest_session(ws, capture_home, *HEAVY_PLUGINS_OFF, env=autoload)
    assert on.returncode == 1, on.stdout
    assert "capture:" not in on.stdout + on.stderr
    for off in ("no:agent_capture", "no:capture"):
        session = pytest_session(ws, capture_home, *HEAVY_PLUGINS_OFF, "-p", off, env=autoload)
        assert session.returncode == 1

    (episode,) = episodes_json(run_capture)
    (run,) = episode["test_runs"]  # only the session with the plugin on was recorded
    assert run["source"] == "pytest-plugin" and run["results_from"] == "plugin"
    assert run["command"].startswith("pytest -q -p no:cacheprovider -p no:hypothesispytest")
    assert (run["passed"], run["failed"], run["errors"], run["skipped"]) == (1, 1, 0, 0)
    assert run["exit_code"] == 1 and run["status"] == "failing"
    assert run["failing_ids"] == ["tests/test_calc.py::test_add"]
    assert run["duration_s"] > 0
    assert episode["tests"]["first_run_after"]["id"] == run["id"]


def plugin_args() -> list[str]:
    return [
        "-p",
        "capture.testruns.sources.pytest_plugin",
    ]  # entry points are not loaded (LONG_WINDOWS)


def test_per_test_outcomes_and_paths_from_a_sub_directory(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_project(tmp_path)
    (ws / "pytest.ini").unlink()
    sub = ws / "pkg"
    (sub / "tests").mkdir(parents=True)
    (sub / "pytest.ini").write_text("[pytest]\n")
    (sub / "tests" / "test_mixed.py").write_text(
        "import pytest\n\n"
        "def test_ok():\n    pass\n\n"
        "def test_bad():\n    assert 0\n\n"
        "@pytest.mark.skip\ndef test_skip():\n    pass\n\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError\n\n"
        "def test_err(broken):\n    pass\n\n"
        "@pytest.mark.xfail\ndef test_xfail():\n    assert 0\n"
    )
    agent_edit(
        run_capture, ws, "pkg/tests/test_mixed.py", "    assert 0\n\n@", "    assert 0\n\n@",
        "claude-code", "t1",
    )  # fmt: skip
    result = pytest_session(sub, capture_home, *plugin_args())
    assert result.returncode == 1
    (episode,) = episodes_json(run_capture)
    (run,) = episode["test_runs"]
    assert (run["passed"], run["failed"], run["errors"], run["skipped"]) == (1, 1, 1, 2)
    assert run["failing_ids"] == ["tests/test_mixed.py::test_bad", "tests/test_mixed.py::test_err"]
    # The ids are pytest's; the files are placed in the workspace, so they match the edit.
    assert episode["tests"]["failing_tests_in_edited_files"] == run["failing_ids"]
    assert episode["tests"]["tests_edited_by_agent"] is True


def test_under_xdist_the_session_is_recorded_once_with_every_worker_s_tests(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_project(tmp_path)
    agent_edit(run_capture, ws, "src/calc.py", "a + b\n", "a + b + 1\n", "claude-code", "t1")
    (ws / "tests" / "test_more.py").write_text(
        "def test_one():\n    pass\n\ndef test_two():\n    pass\n\n"
        "def test_three():\n    assert 1 == 2\n"
    )
    result = pytest_session(ws, capture_home, *plugin_args(), "-p", "xdist.plugin", "-n", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 workers" in result.stdout or "gw1" in result.stdout, result.stdout

    (episode,) = episodes_json(run_capture)
    (run,) = episode["test_runs"]  # the controller's session; no run per worker
    assert run["source"] == "pytest-plugin"
    assert (run["passed"], run["failed"], run["errors"], run["skipped"]) == (3, 2, 0, 0)
    assert sorted(run["failing_ids"]) == [
        "tests/test_calc.py::test_add",
        "tests/test_more.py::test_three",
    ]


def test_a_broken_database_never_fails_the_session(tmp_path: Path) -> None:
    ws = make_project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / "data").write_text("not a directory")
    result = pytest_session(ws, home, *plugin_args())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
    warnings = [line for line in (result.stdout + result.stderr).splitlines() if "capture:" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("capture: warning: this test session was not recorded")


def test_importing_the_plugin_loads_nothing_heavy() -> None:
    code = (
        "import sys; import capture.testruns.sources.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith(('capture', 'sqlite3', 'json'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=capture_env(ROOT / ".no-home"),
        timeout=60,
        check=True,
    )
    # the packages on the way hold docstrings only
    assert out.stdout.strip() == (
        "['capture', 'capture.testruns', 'capture.testruns.sources', "
        "'capture.testruns.sources.pytest_plugin']"
    )
