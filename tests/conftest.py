"""Shared fixtures: an isolated CAPTURE_HOME and the `capture` command run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "tests" / "fixtures" / "agent-formats"
#: Holds a sitecustomize.py that guards the network in every Python process the tests start.
NETGUARD = ROOT / "tests" / "netguard"


def _install_network_guard() -> object:
    """This process may connect to loopback servers the tests start, and to nothing else."""
    import importlib.util

    os.environ.setdefault("CAPTURE_NETGUARD", "deny-remote")
    spec = importlib.util.spec_from_file_location("capture_netguard", NETGUARD / "sitecustomize.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NETWORK_GUARD = _install_network_guard()


def missing_tool(reason: str) -> None:
    """A system tool the test needs is not installed: skip on a developer's machine, fail under
    CI, where `.ci/run` installs every package in `.ci/apt-packages`."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI must run this test)", pytrace=False)
    pytest.skip(reason)


def require_train_extra(*modules: str) -> None:
    """At a test module's top: the modules of the `test-train` extra it needs. Missing, the module
    is skipped on a developer's machine (who installed the light `.[test]`) and fails under CI,
    which installs both extras."""
    import importlib.util

    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if not absent:
        return
    reason = f"{', '.join(absent)} not installed: pip install -e '.[test,test-train]'"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI must run this test)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def capture_env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["CAPTURE_HOME"] = str(home)
    # The same guard in the subprocess (deny-remote unless a test asks for deny-all).
    env["PYTHONPATH"] = os.pathsep.join([str(NETGUARD), str(ROOT), env.get("PYTHONPATH", "")])
    env.setdefault("CAPTURE_WINDOWS", "300ms,600ms,1s")
    # The hook starts no watcher unless a test asks for one (tests/e2e/test_watcher*.py): a
    # watcher outlives the test that started it by its idle time.
    env.setdefault("CAPTURE_WATCHER", "off")
    # `capture install` writes its per-user launcher here, never into the real ~/.local/bin
    env["CAPTURE_BIN_DIR"] = str(home / "bin")
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


@pytest.fixture
def capture_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "capture-home"
    monkeypatch.setenv("CAPTURE_HOME", str(home))
    monkeypatch.setenv("CAPTURE_WINDOWS", "300ms,600ms,1s")
    monkeypatch.setenv("CAPTURE_WATCHER", "off")
    return home


RunCapture = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_capture(capture_home: Path) -> RunCapture:
    """Run `python -m capture ARGS` as a subprocess in the test's CAPTURE_HOME."""

    def run(
        *args: str,
        input: str | bytes | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        check: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        full_env = capture_env(capture_home, **(env or {}))
        proc = subprocess.run(
            [sys.executable, "-m", "capture", *args],
            input=input.encode() if isinstance(input, str) else input,
            capture_output=True,
            cwd=cwd,
            env=full_env,
            timeout=120,
        )
        result = subprocess.CompletedProcess(
            proc.args,
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )
        if check and result.returncode != 0:
            raise AssertionError(f"capture {args} failed: {result.stderr}")
        return result

    run.home = capture_home  # type: ignore[attr-defined]
    return run


def episodes_json(run_capture: RunCapture, *args: str) -> list[dict]:
    result = run_capture("episodes", "--json", *args, check=True)
    return json.loads(result.stdout)


#: The heavy groups, marked by where they live or what they start, so that a contributor can
#: run the fast part alone: `python -m pytest -m "not editors and not vscode and not agents
#: and not postgres and not train"`.
_GROUP_OF_DIRECTORY = {"editors": "editors", "vscode": "vscode", "agents": "agents"}
_TRAINING_MODULES = frozenset({"test_export_training.py"})
_POSTGRES_FIXTURES = frozenset({"pg_cluster", "pg_url"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath)).relative_to(ROOT)
        group = _GROUP_OF_DIRECTORY.get(path.parts[1]) if len(path.parts) > 2 else None
        if group:
            item.add_marker(group)
        if path.name in _TRAINING_MODULES:
            item.add_marker("train")
        params = getattr(getattr(item, "callspec", None), "params", {})
        names = set(getattr(item, "fixturenames", ()))
        if names & _POSTGRES_FIXTURES or "postgresql" in params.values():
            item.add_marker("postgres")
