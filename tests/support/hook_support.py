"""Helpers for the `capture hook` tests: example payloads moved into a test workspace, the hook
run as a real process, and what the database and the hook log hold afterwards."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from capture.connection import sqlite3
from tests.conftest import RunCapture

EXAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "agent-formats" / "examples"
EXAMPLE_ROOT = "/home/dana/src/invoicer"
EXAMPLE_HOME = "/home/dana"

#: environment variables agents set for their hooks; a test must not inherit the ones of the
#: agent it may itself run under
AGENT_ENV = (
    "CLAUDE_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "CODEX_PROJECT_DIR",
    "COPILOT_PROJECT_DIR",
)

TOTALS_BEFORE = (
    "from decimal import Decimal, ROUND_HALF_UP\n\n\ndef tax(subtotal, rate):\n"
    "    return round(subtotal * rate, 2)\n"
)
TOTALS_AFTER = TOTALS_BEFORE.replace(
    "    return round(subtotal * rate, 2)\n",
    '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n',
)
TEST_TOTALS = (
    "from decimal import Decimal\n\nfrom invoicer.totals import tax\n\n\n"
    'def test_tax_rounds_half_up():\n    assert tax(Decimal("10.05"), Decimal("0.5")) == '
    'Decimal("5.03")\n'
)


@pytest.fixture(autouse=True)
def no_agent_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in AGENT_ENV:
        monkeypatch.delenv(name, raising=False)


def make_workspace(tmp_path: Path) -> Path:
    """The example project as the agent left it: totals.py edited, the test written."""
    ws = tmp_path / "invoicer"
    (ws / "invoicer").mkdir(parents=True)
    (ws / "tests").mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "invoicer" / "totals.py").write_text(TOTALS_AFTER)
    (ws / "tests" / "test_totals.py").write_text(TEST_TOTALS)
    return ws.resolve()


def example_text(name: str, ws: Path) -> str:
    """An example payload with its paths moved into `ws` (JSON-escaped as the files hold them)."""
    text = (EXAMPLES / name).read_text()
    text = text.replace(EXAMPLE_ROOT, str(ws))
    return text.replace(EXAMPLE_HOME, str(ws.parent / "home"))


def example(name: str, ws: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(example_text(name, ws))
    return value


def hook(
    run_capture: RunCapture,
    agent: str,
    payload: dict[str, Any] | str | bytes,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    body = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
    result = run_capture("hook", agent, *args, input=body, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    wait_for_queue(run_capture.home)  # type: ignore[attr-defined]
    return result


def wait_for_queue(home: Path, timeout: float = 30.0) -> None:
    """The hook returns before its payload is applied (a detached child does it): wait until
    the queue is empty, as a later reader of the store would."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        path = home / "data" / "capture.db"
        if not path.exists():
            return
        conn = sqlite3.connect(path, timeout=30)
        try:
            left = conn.execute("SELECT count(*) FROM hook_inbox").fetchone()[0]
        except sqlite3.OperationalError:
            left = 0
        finally:
            conn.close()
        if left == 0:
            return
        time.sleep(0.02)
    raise AssertionError("queued hook payloads were not applied")


def db(home: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(home / "data" / "capture.db")
    conn.row_factory = sqlite3.Row
    return conn


def rows(home: Path, sql: str, *params: object) -> list[sqlite3.Row]:
    path = home / "data" / "capture.db"
    if not path.exists():
        return []
    conn = db(home)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def count(home: Path, table: str) -> int:
    found = rows(home, f"SELECT count(*) FROM {table}")
    return int(found[0][0]) if found else 0


def log_lines(home: Path) -> list[str]:
    path = home / "state" / "log" / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []
