"""SIGTERM, SIGHUP or ``exit`` right after a burst of proposals: every one of them is in the
store when the process has gone, each once, with its regions where the buffer had them; and
proposals between keystrokes keep their regions true."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from capture.connection import sqlite3
from tests.support.rawlsp import RawClient, change, frame, proposal

COUNT = 300
LINES = 400


def _document() -> str:
    return "".join(f"value_{i} = compute({i})\n" for i in range(LINES))


def _burst(client: RawClient, root: Path) -> tuple[str, list[str]]:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    text = _document()
    path = root / "module.py"
    path.write_text(text)
    client.initialize(root)
    uri = client.open(path, text)
    lines = text.splitlines(keepends=True)
    # One write: the server cannot have committed them when the signal follows.
    client.send(b"".join(proposal(uri, "old\n", lines[n], n) for n in range(COUNT)))
    return uri, lines


def _recorded(home: Path) -> list[tuple[str, int, int]]:
    conn = sqlite3.connect(home / "data" / "capture.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return conn.execute(
            """SELECT h.new_text, h.region_start, h.region_end FROM hunks h
               JOIN proposals p ON p.id = h.proposal_id ORDER BY h.region_start"""
        ).fetchall()
    finally:
        conn.close()


def _assert_all_there(home: Path, lines: list[str]) -> None:
    rows = _recorded(home)
    assert len(rows) == COUNT  # none lost, none twice
    offset = 0
    starts = []
    for line in lines[:COUNT]:
        starts.append(offset)
        offset += len(line)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (lines[n], starts[n], starts[n] + len(lines[n])) for n in range(COUNT)
    ]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_right_after_a_burst_commits_it_all(
    tmp_path: Path, capture_home: Path, signum: signal.Signals
) -> None:
    client = RawClient(capture_home)
    try:
        _, lines = _burst(client, tmp_path / "project")
        client.process.send_signal(signum)
        assert client.process.wait(timeout=30) == 0
    finally:
        if client.process.poll() is None:
            client.kill()
    _assert_all_there(capture_home, lines)


def test_exit_without_shutdown_right_after_a_burst_commits_it_all(
    tmp_path: Path, capture_home: Path
) -> None:
    client = RawClient(capture_home)
    try:
        _, lines = _burst(client, tmp_path / "project")
        client.send(frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
        assert client.process.wait(timeout=30) == 1  # exit before shutdown, as the LSP says
    finally:
        if client.process.poll() is None:
            client.kill()
    _assert_all_there(capture_home, lines)


def test_proposals_between_keystrokes_keep_their_regions_true(
    tmp_path: Path, capture_home: Path
) -> None:
    """Each proposal arrives after a keystroke moved every earlier region: the store's regions,
    written before each proposal rather than carried by a diff, still point at each agent
    text in the final buffer."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    text = _document()
    path = root / "module.py"
    path.write_text(text)
    lines = text.splitlines(keepends=True)
    client = RawClient(capture_home)
    try:
        client.initialize(root)
        uri = client.open(path, text)
        for k in range(40):
            client.send(change(uri, 2 + k, (0, 0), (0, 0), "x"))  # moves every region
            client.send(proposal(uri, "old\n", lines[1 + 3 * k], 1 + 3 * k))
        client.stats()
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.kill()
    final = "x" * 40 + text
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    try:
        hunks = conn.execute("SELECT new_text, region_start, region_end FROM hunks").fetchall()
        (baseline,) = conn.execute("SELECT text FROM tracked_files").fetchone()
    finally:
        conn.close()
    assert baseline == final
    assert len(hunks) == 40
    assert all(final[start:end] == new for new, start, end in hunks)
    assert sorted(new for new, _, _ in hunks) == sorted(lines[1 + 3 * k] for k in range(40))
