"""The spool a hook writes to when the disk is full: records kept in the room allocated in
advance, replayed into the queue once, and the store's passing faults told from real ones."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from capture.connection import sqlite3
from capture.hooks import spool


def test_kept_payloads_come_back_once_in_order(tmp_path: Path) -> None:
    assert spool.keep(str(tmp_path), (1.0, "codex", None, b"{}", "/w", "")) is False  # no spool
    assert spool.ensure(str(tmp_path))
    assert (tmp_path / spool.SPOOL_NAME).stat().st_size == spool.SPOOL_BYTES
    kept = [
        (1_796_000_000.5, "claude-code", "PostToolUse", b'{"a": 1}', "/w", "CLAUDE_PROJECT_DIR=/w"),
        (1_796_000_001.0, "cursor", None, b"\xff\x00 raw", "/w/\udcff", ""),
    ]
    for record in kept:
        assert spool.keep(str(tmp_path), record)
    got: list[list[spool.SpooledPayload]] = []
    assert spool.replay(str(tmp_path), got.append) == 2
    assert got == [kept]
    assert spool.replay(str(tmp_path), got.append) == 0  # emptied
    # what the replay left further on is never read again
    assert spool.keep(str(tmp_path), kept[1])
    assert spool.replay(str(tmp_path), got.append) == 1 and got[-1] == [kept[1]]


def test_a_failed_replay_keeps_everything_and_a_full_spool_refuses(tmp_path: Path) -> None:
    spool.ensure(str(tmp_path))
    record = (1.0, "codex", "Stop", b"x" * 1_000_000, "/w", "")

    def fails(_: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    kept = 0
    while spool.keep(str(tmp_path), record):
        kept += 1
    assert kept == spool.SPOOL_BYTES // 1_000_000
    with pytest.raises(sqlite3.OperationalError):
        spool.replay(str(tmp_path), fails)
    assert spool.replay(str(tmp_path), lambda records: None) == kept


def test_what_counts_as_a_full_disk(tmp_path: Path) -> None:
    assert spool.disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert spool.disk_full(sqlite3.OperationalError("database or disk is full"))
    assert not spool.disk_full(sqlite3.OperationalError("disk I/O error"))
    # with room on the file system, a vague error is not taken for a full disk
    assert not spool.disk_full(sqlite3.OperationalError("disk I/O error"), str(tmp_path))
