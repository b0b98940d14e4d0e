"""A small Python project with an agent's edits and pytest runs, for the test-run tests."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import RunCapture

CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from src.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
TEST_TEXT = "def test_upper():\n    assert 'a'.upper() == 'A'\n"
SHOUT = "\n\ndef test_shout():\n    assert 'hey'.upper() + '!' == 'HEY!!'\n"
#: Nothing settles during a test; the inner pytest sessions load no plugin from entry points
#: (the test extras' hypothesis and pytest-lsp cost seconds a session), ours only with -p.
LONG_WINDOWS = {"CAPTURE_WINDOWS": "10m", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
#: For sessions that must load entry points (ours), the others that are installed, turned off.
HEAVY_PLUGINS_OFF = ["-p", "no:hypothesispytest", "-p", "no:pytest-lsp", "-p", "no:asyncio"]


def plugin_installed() -> bool:
    entry_points = importlib.metadata.entry_points(group="pytest11")
    return any(ep.name == "agent_capture" for ep in entry_points)


def pytest_cmd(*, plugin: bool) -> list[str]:
    """A pytest session over the project's tests (run with LONG_WINDOWS' environment)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    cmd[3:3] = (
        ["-p", "capture.testruns.sources.pytest_plugin"] if plugin else ["-p", "no:agent_capture"]
    )
    return cmd


def make_project(tmp_path: Path) -> Path:
    ws = tmp_path / "proj"
    (ws / "src").mkdir(parents=True)
    (ws / "tests").mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "pytest.ini").write_text("[pytest]\n")
    (ws / "src" / "__init__.py").write_text("")
    (ws / "src" / "calc.py").write_text(CALC)
    (ws / "tests" / "test_calc.py").write_text(TEST_CALC)
    (ws / "tests" / "test_text.py").write_text(TEST_TEXT)
    return ws


def agent_edit(
    run_capture: RunCapture, ws: Path, file: str, old: str, new: str, agent: str, turn: str
) -> str:
    path = ws / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    body = {
        "file": file,
        "old_text": old,
        "new_text": new,
        "agent": agent,
        "session_id": f"session-{agent}",
        "turn_id": turn,
    }
    result = run_capture("propose", "--json", input=json.dumps(body), cwd=ws, env=LONG_WINDOWS)
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["episode"])
