"""The watcher's status file (`watcher.json` in the state directory): who watches, since when,
its last sign of life and what it watches. `capture doctor` shows it, and every evaluator of
checkpoints reads from it the span in which the watcher's recorded changes say what a file held
(`capture.edits.history`)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from capture.edits.history import Coverage

__all__ = ["WatcherStatus", "read_status", "status_path", "watched_coverage", "write_status"]

STATUS_FILE = "watcher.json"


@dataclass(slots=True)
class WatcherStatus:
    pid: int
    started_at: float
    alive_at: float
    #: "inotify" (or the platform's watcher) or "polling" (the system refused more watches)
    mode: str = "events"
    folders: list[str] = field(default_factory=list)
    files: int = 0
    stopped_at: float | None = None


def status_path(state_dir: Path) -> Path:
    return state_dir / STATUS_FILE


def write_status(state_dir: Path, status: WatcherStatus) -> None:
    """Replace the status file in one rename: a reader never sees half of it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    target = status_path(state_dir)
    temporary = target.with_name(f".{STATUS_FILE}.{os.getpid()}")
    temporary.write_text(json.dumps(asdict(status)), encoding="utf-8")
    os.replace(temporary, target)


def read_status(state_dir: Path) -> WatcherStatus | None:
    try:
        data = json.loads(status_path(state_dir).read_text(encoding="utf-8"))
        return WatcherStatus(**data)
    except (OSError, ValueError, TypeError):
        return None


def watched_coverage(state_dir: Path) -> Coverage | None:
    """The span the last watcher followed its files, from its start to its last sign of life."""
    status = read_status(state_dir)
    if status is None:
        return None
    return Coverage(status.started_at, status.alive_at)
