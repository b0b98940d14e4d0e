"""Starting the watcher on demand: the hook's applier (already detached from the agent) asks
whether one runs after it records an edit, and starts one, detached from every terminal and
process group, when none does and checkpoints are pending."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

from capture.config import Config
from capture.store.change_rows import pending_files
from capture.store.database import Store
from capture.watch.hints import leave_hint
from capture.watch.lock import running

__all__ = ["ensure_watcher", "spawn_watcher", "start_if_stopped"]


def start_if_stopped(config: Config, edited: Sequence[str]) -> bool:
    """Hand the watcher the files of an edit being recorded, and start one if none runs
    (checkpoints pending or not yet); True when one was started."""
    if not config.watcher:
        return False
    leave_hint(config.paths.state_dir, edited)
    if running(config.paths.state_dir):
        return False
    spawn_watcher()
    return True


def ensure_watcher(store: Store, config: Config) -> bool:
    """Start a watcher if none runs and a checkpoint is pending; True when one was started."""
    if not config.watcher or running(config.paths.state_dir):
        return False
    if not pending_files(store.conn):
        return False
    spawn_watcher()
    return True


def spawn_watcher() -> None:
    """`capture watch` in a session of its own: no terminal, nothing the agent waits for. Two
    started at once settle it between them: the second finds the lock held and exits."""
    subprocess.Popen(
        [sys.executable, "-m", "capture", "watch"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        start_new_session=True,
        cwd=os.sep,
    )
