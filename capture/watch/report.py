"""What `capture doctor` says of the watcher: whether it runs, since when, what it watches,
and whether it is installed as a user service."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from typing import Any

from capture.config import Config
from capture.recording.coverage import read_status
from capture.watch.lock import running
from capture.watch.service import service_file

__all__ = ["watcher_lines", "watcher_state"]


def watcher_state(config: Config) -> dict[str, Any]:
    status = read_status(config.paths.state_dir)
    live = running(config.paths.state_dir)
    state: dict[str, Any] = {
        "enabled": config.watcher,
        "running": live,
        "service": str(path) if (path := service_file(sys.platform, os.environ)).exists() else None,
    }
    if status is not None:
        state.update(
            pid=status.pid if live else None,
            started_at=status.started_at,
            alive_at=status.alive_at,
            stopped_at=status.stopped_at,
            mode=status.mode,
            files=status.files,
            folders=status.folders,
        )
    return state


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).astimezone().isoformat(timespec="seconds")


def watcher_lines(state: dict[str, Any]) -> list[str]:
    if state["running"]:
        head = f"running (pid {state.get('pid')}) since {_when(state['started_at'])}"
    elif not state["enabled"]:
        head = "off (watcher = false, or CAPTURE_WATCHER=off): checkpoints are read late"
    elif state.get("stopped_at"):
        head = f"not running (last stopped {_when(state['stopped_at'])}; the next edit starts it)"
    else:
        head = "not running (the next recorded edit starts it)"
    lines = [f"watcher   {head}"]
    if state["running"]:
        mode = "polling: the system refused watches" if state.get("mode") == "polling" else ""
        lines.append(
            f"          {state.get('files', 0)} pending file(s) in "
            f"{len(state.get('folders') or [])} folder(s){', ' + mode if mode else ''}"
        )
        lines += [f"          {folder}" for folder in (state.get("folders") or [])[:10]]
    if state["service"]:
        lines.append(f"          installed as a user service: {state['service']}")
    return lines
