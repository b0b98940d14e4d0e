"""A real VS Code for the tests: code-server 4.100.3 (installed with the extension's .vsix by
.ci/vscode-setup into .cache/vscode) on 127.0.0.1 with --auth none, and the puppeteer-core
scripts beside this file that drive it through Debian's chromium."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, capture_env, missing_tool

__all__ = [
    "CACHE",
    "CodeServer",
    "capture_serve_pids",
    "link_project_venv",
    "needs_vscode",
    "read_trace",
    "run_driver",
]

CACHE = Path(os.environ.get("CAPTURE_VSCODE_CACHE", ROOT / ".cache" / "vscode"))
CODE_SERVER = CACHE / "code-server" / "node_modules" / ".bin" / "code-server"
PUPPETEER = CACHE / "tools" / "node_modules" / "puppeteer-core"
VSIX = CACHE / "agent-capture.vsix"
HERE = Path(__file__).resolve().parent
EXTENSION_ID = "agent-capture.agent-capture"
#: Skips these tests on any machine; without it, they are skipped only where code-server is not
#: set up, and fail under CI (as every end-to-end test whose tools are missing).
SKIP_VAR = "CAPTURE_SKIP_VSCODE"


def needs_vscode() -> None:
    """Skip when disabled; skip (fail under CI) with what is missing and how to set it up."""
    if os.environ.get(SKIP_VAR, "") == "1":
        pytest.skip(f"{SKIP_VAR}=1: the VS Code end-to-end tests are disabled")
    missing = [
        str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p)
        for p in (CODE_SERVER, PUPPETEER, VSIX)
        if not p.exists()
    ]
    if missing:
        missing_tool(f"not installed: {', '.join(missing)}; run .ci/vscode-setup")
    if shutil.which("chromium") is None:
        missing_tool("chromium is not installed (.ci/apt-packages)")


def link_project_venv(workspace: Path) -> None:
    """The workspace's `.venv` is this project's virtual environment, so that the extension
    finds `capture` there. (PATH would not do: VS Code's extension host takes PATH from the
    user's login shell, not from the process that started it.)"""
    (workspace / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


USER_SETTINGS: dict[str, Any] = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.editor.enablePreview": False,
    "workbench.tips.enabled": False,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "update.mode": "none",
    "workbench.enableExperiments": False,
    "files.autoSave": "off",
    "editor.autoClosingBrackets": "never",
    "editor.autoIndent": "none",
    "editor.acceptSuggestionOnEnter": "off",
    "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
    "editor.suggestOnTriggerCharacters": False,
    "editor.inlineSuggest.enabled": False,
    "editor.parameterHints.enabled": False,
    "editor.hover.enabled": False,
    "git.enabled": False,
    "python.languageServer": "None",
}


class CodeServer:
    """One code-server process (its own user data, extensions and XDG folders under `base`),
    with the extension installed from the .vsix unless `install` is false."""

    def __init__(
        self,
        base: Path,
        capture_home: Path,
        *,
        settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        install: bool = True,
        vsix: Path | None = None,
    ) -> None:
        self.base = base
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.trace = base / "extension-trace.jsonl"
        self.log = base / "code-server.log"
        user = base / "user"
        (user / "User").mkdir(parents=True, exist_ok=True)
        (user / "User" / "settings.json").write_text(
            json.dumps({**USER_SETTINGS, **(settings or {})}, indent=2)
        )
        self.user = user
        self.extensions = base / "extensions"
        self.extensions.mkdir(exist_ok=True)
        # Short: chromium's and the extension host's sockets live there (108 bytes at most).
        self.tmp = Path(tempfile.mkdtemp(prefix="acvs-"))
        self.env = capture_env(
            capture_home,
            XDG_CONFIG_HOME=str(base / "xdg-config"),
            XDG_DATA_HOME=str(base / "xdg-data"),
            XDG_STATE_HOME=str(base / "xdg-state"),
            XDG_CACHE_HOME=str(base / "xdg-cache"),
            TMPDIR=str(self.tmp),
            AGENT_CAPTURE_VSCODE_TRACE=str(self.trace),
            **(env or {}),
        )
        self.env.pop("CI_APT_PACKAGES", None)
        self.install = install
        self.vsix = vsix or VSIX
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> CodeServer:
        if self.install:
            subprocess.run(
                [str(CODE_SERVER), *self._dirs(), "--install-extension", str(self.vsix)],
                env=self.env,
                check=True,
                capture_output=True,
                timeout=120,
            )
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    str(CODE_SERVER),
                    "--bind-addr",
                    f"127.0.0.1:{self.port}",
                    "--auth",
                    "none",
                    "--disable-telemetry",
                    "--disable-update-check",
                    "--disable-workspace-trust",
                    "--disable-getting-started-override",
                    *self._dirs(),
                ],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"code-server exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2):
                    return self
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"code-server did not answer: {self.log.read_text()[-2000:]}")

    def _dirs(self) -> list[str]:
        return ["--user-data-dir", str(self.user), "--extensions-dir", str(self.extensions)]

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None


def run_driver(
    script: str, server: CodeServer, config: dict[str, Any], timeout: float = 240
) -> dict[str, Any]:
    """Run tests/vscode/SCRIPT (a puppeteer-core script) against `server`; returns the JSON it
    wrote. Its stderr goes into the assertion message when it fails."""
    out = server.base / f"{Path(script).stem}-result.json"
    cfg = server.base / f"{Path(script).stem}-config.json"
    cfg.write_text(
        json.dumps(
            {
                "url": server.url,
                "puppeteer": str(PUPPETEER),
                "chromium": shutil.which("chromium"),
                "shots": str(server.base / "shots"),
                "trace": str(server.trace),
                "out": str(out),
                "python": sys.executable,
                **config,
            }
        )
    )
    script_path = HERE / script if not Path(script).is_absolute() else Path(script)
    result = subprocess.run(
        ["node", str(script_path), str(cfg)],
        env=server.env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"{script} failed ({result.returncode}):\n{result.stdout[-4000:]}\n"
            f"{result.stderr[-4000:]}\ncode-server log:\n{server.log.read_text()[-2000:]}"
        )
    value: dict[str, Any] = json.loads(out.read_text())
    return value


def read_trace(server: CodeServer) -> list[dict[str, Any]]:
    if not server.trace.exists():
        return []
    return [json.loads(line) for line in server.trace.read_text().splitlines() if line.strip()]


def capture_serve_pids(capture_home: Path) -> list[int]:
    """The live `capture serve` processes that write into `capture_home` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"serve" not in argv or not any(a.endswith(b"capture") for a in argv):
                continue
            env = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue
        if f"CAPTURE_HOME={capture_home}".encode() in env:
            found.append(int(entry.name))
    return sorted(found)
