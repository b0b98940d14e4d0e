"""Reading the files edits live in, and naming them relative to their workspace (agent-capture's
own files are `capture.paths`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["MAX_TRACKED_BYTES", "find_workspace", "read_text", "relative_to_workspace"]

#: Larger files are not followed: their regions are reported lost rather than stall a hook.
MAX_TRACKED_BYTES = 8 * 1024 * 1024


def read_text(path: Path) -> str | None:
    """The file's text, or None when it is missing, too large, not text, or not a regular file
    (a FIFO or a device would block the reader, or never end)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        # Non-blocking open: the path may have been swapped for a FIFO since the stat, and
        # opening a FIFO blocks until a writer appears. fstat then judges what was opened.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            data = fh.read(MAX_TRACKED_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > MAX_TRACKED_BYTES or b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def find_workspace(path: Path, fallback: Path | None = None) -> Path:
    """The nearest enclosing git work tree, else `fallback` (the current directory)."""
    start = path if path.is_dir() else path.parent
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return fallback if fallback is not None else Path.cwd()


def relative_to_workspace(path: Path, root: Path) -> str | None:
    """POSIX path of `path` inside `root`, or None when it lies outside."""
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return None
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return None
    return Path(rel).as_posix()
