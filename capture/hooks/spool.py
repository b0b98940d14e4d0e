"""Where a hook keeps a payload the store cannot take because the disk is full: a small file
allocated in advance beside the database (`hook-spool.bin`), so writing into it needs no new
space. The next drain of the queue (the next hook call, any reader of the store) moves what
it holds into the queue once the store can take it, without anyone doing anything.

Records follow one another from the start, each a header (its length, when the hook fired, the
lengths of its parts) and its parts; a zero length ends them. Replaying moves them all into
the queue in one transaction, then zeroes the first header: the spool is empty again. A crash
between the two replays them once more (queued twice: the payloads' own keys keep their edits
and runs from being recorded twice). Imports are the standard library's only: the hook that
needs it has failed once already and must still return at once."""

from __future__ import annotations

import contextlib
import errno
import os
import struct
from collections.abc import Callable, Iterator

__all__ = [
    "LOW_SPACE",
    "SPOOL_BYTES",
    "SPOOL_NAME",
    "SpooledPayload",
    "disk_full",
    "ensure",
    "keep",
    "replay",
]

SPOOL_NAME = "hook-spool.bin"
#: Room for some hundreds of typical payloads (a few KB each); past it, one is lost, logged.
SPOOL_BYTES = 4 * 1024 * 1024
# total length, when, then the lengths of agent, event (0xFFFFFFFF: none), payload, cwd, env
_HEAD = struct.Struct(">IdIIIII")
_NONE = 0xFFFFFFFF

#: Free space under which a failed write is taken for a full disk whatever its message says.
LOW_SPACE = 1024 * 1024

SpooledPayload = tuple[float, str, str | None, bytes, str, str]


def disk_full(exc: BaseException, data_dir: str | None = None) -> bool:
    """A write failed for want of space: SQLite says so in words, the OS by errno, or (SQLite
    cannot even create its WAL: "disk I/O error", "unable to open") the file system of
    `data_dir` has less than LOW_SPACE left."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    if "disk is full" in text:
        return True
    if data_dir is None:
        return False
    try:
        found = os.statvfs(data_dir)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < LOW_SPACE


def _path(data_dir: str) -> str:
    return os.path.join(data_dir, SPOOL_NAME)


def ensure(data_dir: str) -> bool:
    """Allocate the spool if it is not there (while there is room); False if it cannot be."""
    path = _path(data_dir)
    if os.path.exists(path):
        return True
    try:
        fd = os.open(path + ".new", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return False
    try:
        os.posix_fallocate(fd, 0, SPOOL_BYTES)
        os.pwrite(fd, bytes(_HEAD.size), 0)  # an empty spool: its first length is zero
        os.fsync(fd)
        os.close(fd)
        os.replace(path + ".new", path)
        return True
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path + ".new")
        return False


def _text(value: str) -> bytes:
    return value.encode("utf-8", "surrogateescape")


def _records(fd: int, size: int) -> Iterator[tuple[int, SpooledPayload]]:
    offset = 0
    while offset + _HEAD.size <= size:
        head = os.pread(fd, _HEAD.size, offset)
        total, at, *lengths = _HEAD.unpack(head)
        if total == 0 or offset + total > size:
            return
        body = os.pread(fd, total - _HEAD.size, offset + _HEAD.size)
        parts: list[bytes | None] = []
        pos = 0
        for n in lengths:
            if n == _NONE:
                parts.append(None)
                continue
            parts.append(body[pos : pos + n])
            pos += n
        agent, event, payload, cwd, env = parts
        yield (
            offset + total,
            (
                at,
                (agent or b"").decode("utf-8", "surrogateescape"),
                None if event is None else event.decode("utf-8", "surrogateescape"),
                payload or b"",
                (cwd or b"").decode("utf-8", "surrogateescape"),
                (env or b"").decode("utf-8", "surrogateescape"),
            ),
        )
        offset += total


def keep(data_dir: str, record: SpooledPayload) -> bool:
    """Write one payload into the spool's allocated room; False when there is no spool or no
    room left in it."""
    import fcntl

    at, agent, event, payload, cwd, env = record
    parts = [_text(agent), None if event is None else _text(event), payload, _text(cwd), _text(env)]
    body = b"".join(p for p in parts if p is not None)
    lengths = [_NONE if p is None else len(p) for p in parts]
    total = _HEAD.size + len(body)
    try:
        fd = os.open(_path(data_dir), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        end = max((after for after, _ in _records(fd, size)), default=0)
        if end + total + _HEAD.size > size:
            return False
        # the record, then a zero length after it: what a replay left further on is not read
        os.pwrite(fd, _HEAD.pack(total, at, *lengths) + body + bytes(_HEAD.size), end)
        os.fsync(fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def replay(data_dir: str, put: Callable[[list[SpooledPayload]], None]) -> int:
    """Hand every spooled payload to `put` (which queues them in one transaction, or raises),
    then empty the spool; returns how many. Nothing is emptied when `put` raises."""
    import fcntl

    try:
        fd = os.open(_path(data_dir), os.O_RDWR)
    except OSError:
        return 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        records = [r for _, r in _records(fd, os.fstat(fd).st_size)]
        if not records:
            return 0
        put(records)
        os.pwrite(fd, bytes(_HEAD.size), 0)
        os.fsync(fd)
        return len(records)
    finally:
        os.close(fd)
