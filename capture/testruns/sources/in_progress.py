"""Markers of test runs in progress: `capture run`, and pytest sessions writing a JUnit report,
leave one while they run so that a JUnit watcher leaves their reports to them."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["RUNNING_DIR", "mark_running", "runs_in_progress", "unmark"]

#: Under the state directory: one file per run in progress, named by its process id and
#: holding its workspace root.
RUNNING_DIR = "running"


def mark_running(state_dir: Path, workspace: str) -> Path | None:
    try:
        directory = state_dir / RUNNING_DIR
        directory.mkdir(parents=True, exist_ok=True)
        marker = directory / str(os.getpid())
        marker.write_text(workspace)
        return marker
    except OSError:
        return None


def unmark(marker: Path | None) -> None:
    if marker is not None:
        with contextlib.suppress(OSError):
            marker.unlink()


def runs_in_progress(state_dir: Path, workspace: str) -> bool:
    """Whether a marked run of this workspace is still going (its process is alive)."""
    try:
        entries = list((state_dir / RUNNING_DIR).iterdir())
    except OSError:
        return False
    for entry in entries:
        try:
            pid = int(entry.name)
            if entry.read_text() != workspace:
                continue
            os.kill(pid, 0)
        except (ValueError, OSError):
            continue
        return True
    return False
