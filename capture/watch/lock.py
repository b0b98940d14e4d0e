"""One watcher per installation (per CAPTURE_HOME): a lock file in the state directory held for
the watcher's life. Asking whether one runs is one open and one non-blocking lock attempt: the
hook asks it on every recorded edit."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

__all__ = ["LOCK_FILE", "hold", "lock_path", "running"]

LOCK_FILE = "watcher.lock"


def lock_path(state_dir: Path) -> Path:
    return state_dir / LOCK_FILE


def running(state_dir: Path) -> bool:
    """Whether a watcher holds the lock now."""
    try:
        fd = os.open(lock_path(state_dir), os.O_RDONLY)
    except OSError:
        return False  # no lock file: no watcher ever ran here
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock this test took
    return False


def hold(state_dir: Path) -> IO[str] | None:
    """Take the lock for this process's life (the file stays open); None when another watcher
    holds it. The lock file holds the holder's pid, for `capture doctor` and a test's kill."""
    state_dir.mkdir(parents=True, exist_ok=True)
    handle = lock_path(state_dir).open("a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle
