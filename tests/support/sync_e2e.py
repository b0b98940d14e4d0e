"""Shared set-up for the sync must-hold tests: a capture home filled with episodes (written
straight into the store: thousands through the CLI would take minutes), opted in through the
real command line, and `capture sync` run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from capture.store.database import Store
from tests.conftest import capture_env
from tests.support.synthetic_episodes import write_episodes


class Home:
    def __init__(self, tmp: Path, name: str = "home") -> None:
        self.path = tmp / name
        self.ws = tmp / f"{name}-ws"
        self.ws.mkdir(parents=True)

    def env(self, **extra: str) -> dict[str, str]:
        return capture_env(self.path, **extra)

    def fill(self, episodes: list[dict[str, Any]]) -> None:
        with Store.open(self.path / "data" / "capture.db") as store:
            write_episodes(store, episodes, now=time.time())

    def cmd(self, *args: str, **env: str) -> list[str]:
        return [sys.executable, "-m", "capture", *args]

    def run(self, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            self.cmd(*args), env=self.env(**env), capture_output=True, text=True, timeout=300
        )
        if check and result.returncode != 0:
            raise AssertionError(f"capture {args} failed ({result.returncode}): {result.stderr}")
        return result

    def popen(self, *args: str, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.cmd(*args),
            env=self.env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def enable(self, url: str, token: str, level: str = "redacted") -> None:
        self.run("sync", "enable", "--url", url, "--token", token, "--level", level,
                 "--workspace", str(self.ws))  # fmt: skip

    def status(self) -> dict[str, Any]:
        return dict(json.loads(self.run("sync", "status", "--json").stdout))
