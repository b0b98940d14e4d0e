"""Reading the files edits live in, and naming them relative to their workspace (agent-capture's
own files are `capture.paths`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = [
    "MAX_TRACKED_BYTES",
    "decode_text",
    "find_workspace",
    "read_regular",
    "read_text",
    "relative_to_workspace",
]

#: Larger files are not followed: their regions are reported lost rather than stall a hook.
MAX_TRACKED_BYTES = 8 * 1024 * 1024


def read_regular(
    path: str | Path, limit: int = MAX_TRACKED_BYTES
) -> tuple[bytes | None, int | None, str | None]:
    """A regular file's bytes, its size, and why there are none (`deleted`, `too-large`,
    `unreadable`). Anything but a regular file is refused: a FIFO or a device would block the
    reader, or never end. The open does not block either, since the path may have been swapped
    for a FIFO since the stat; fstat then judges what was opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None, None, "deleted"
    except (OSError, ValueError):
        return None, None, "unreadable"
    if not stat.S_ISREG(info.st_mode):
        return None, None, "unreadable"
    if info.st_size > limit:
        return None, info.st_size, "too-large"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None, None, "deleted"
    except (OSError, ValueError):
        return None, None, "unreadable"
    chunks = []
    size = 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, None, "unreadable"
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None, None, "unreadable"
    finally:
        os.close(fd)
    if size > limit:
        return None, size, "too-large"
    return b"".join(chunks), size, None


def decode_text(data: bytes) -> str | None:
    """The bytes as text, or None when they are not text (a NUL early on, or not UTF-8)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_text(path: Path) -> str | None:
    """The file's text, or None when it is missing, too large, not text, or not a regular file."""
    data, _, _ = read_regular(path)
    return None if data is None else decode_text(data)


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
