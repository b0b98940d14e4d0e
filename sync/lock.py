"""One uploader at a time per machine: `capture sync now` and the server's background uploader
would otherwise send the same rows twice (harmless, thanks to idempotency keys, but wasteful)."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["upload_lock"]


@contextmanager
def upload_lock(path: Path, *, wait: float = 0.0) -> Iterator[bool]:
    """Yields True when this process holds the lock (waiting up to `wait` seconds for it), False
    when another one does. The kernel releases it when the process dies, even by SIGKILL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    held = False
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.1)
        yield held
    finally:
        if held:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
