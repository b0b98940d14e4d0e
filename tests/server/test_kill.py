"""SIGKILL in the middle of a burst: nothing committed is lost, and a restarted server resumes
following the live proposals."""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path

from capture.connection import sqlite3
from tests.support.lspkit import query
from tests.support.rawlsp import RawClient, frame

OLD = "    return 0\n"
NEW = "    result = 0\n    for item in items:\n        result += item\n    return result\n"
ORIGINAL = "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2]))\n"
WINDOWS = "2s,3s,4s"


def change(
    uri: str, version: int, line: int, character: int, text: str, end: int | None = None
) -> bytes:
    return frame(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": line, "character": character},
                            "end": {"line": line, "character": character if end is None else end},
                        },
                        "text": text,
                    }
                ],
            },
        }
    )


def test_sigkill_during_a_burst_then_resume(tmp_path: Path, capture_home: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    names = ["kept.py", "undone.py"]
    applied = ORIGINAL.replace(OLD, NEW)
    for name in names:
        (root / name).write_text(ORIGINAL)
    first = RawClient(capture_home, CAPTURE_WINDOWS=WINDOWS)
    uris = {}
    committed = 0
    try:
        first.initialize(root)
        for name in names:
            uris[name] = first.open(root / name, ORIGINAL)
            # The agent's edit lands in the buffer (line 1 replaced), and is reported.
            first.send(change(uris[name], 2, 1, 0, NEW.rstrip("\n"), end=len(OLD) - 1))
            first.notify(
                "capture/proposal",
                {
                    "uri": uris[name],
                    "oldText": OLD,
                    "newText": NEW,
                    "agent": "burst-agent",
                    "range": {
                        "start": {"line": 1, "character": 0},
                        "end": {"line": 5, "character": 0},
                    },
                },
            )
        assert first.stats()["tracking"]["inEditor"] == 2
        # The burst: keystrokes far from the agent's lines, test runs numbered in order, and
        # now and then a request whose answer proves what was committed before it.
        rng = random.Random(7)
        version = 3
        kept_lines = applied.split("\n")
        for i in range(3000):
            burst = [change(uris["kept.py"], version, 6 + (i % 3), 0, "x")]
            kept_lines[6 + (i % 3)] = "x" + kept_lines[6 + (i % 3)]
            version += 1
            if i % 10 == 0:
                burst.append(
                    frame(
                        {
                            "jsonrpc": "2.0",
                            "method": "capture/testRun",
                            "params": {
                                "command": "pytest",
                                "name": f"run-{i // 10:04d}",
                                "exitCode": 0,
                            },
                        }
                    )
                )
            first.send(b"".join(burst))
            if i % 500 == 250:
                committed = max(committed, first.stats()["testRuns"]["total"])
            if i > 1500 and rng.random() < 0.002:
                break
        first.kill()  # SIGKILL: no shutdown, no flush
    finally:
        if first.process.poll() is None:
            first.kill()
    assert committed > 0
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        runs = [n for (n,) in conn.execute("SELECT name FROM test_runs ORDER BY name")]
        run_events = conn.execute("SELECT count(*) FROM events WHERE kind = 'test_run'").fetchone()[
            0
        ]
        live = conn.execute("SELECT count(*) FROM proposals WHERE settled_at IS NULL").fetchone()[0]
    finally:
        conn.close()
    # What a response said was there is there; the runs kept are a prefix of those sent (the
    # writer commits in arrival order); each record came with its raw event.
    assert len(runs) >= committed
    assert runs == [f"run-{k:04d}" for k in range(len(runs))]
    assert run_events == len(runs)
    assert live == 2

    # The editor restarts the server and reopens what it holds: the unsaved buffers.
    second = RawClient(capture_home, CAPTURE_WINDOWS=WINDOWS)
    try:
        second.initialize(root)
        deadline = time.monotonic() + 10
        while second.stats()["tracking"]["live"] < 2:
            assert time.monotonic() < deadline, "the restarted server did not resume"
            time.sleep(0.1)
        # The buffers as the editor holds them, unsaved: the agent's edits and the keystrokes
        # the killed server may or may not have seen.
        texts = {"kept.py": "\n".join(kept_lines), "undone.py": applied}
        for name in names:
            second.open(root / name, texts[name])
        # Now the user takes the agent's edit of undone.py back.
        line = applied[: applied.index(NEW)].count("\n")
        second.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uris["undone.py"], "version": 100},
                        "contentChanges": [
                            {
                                "range": {
                                    "start": {"line": line, "character": 0},
                                    "end": {"line": line + NEW.count("\n"), "character": 0},
                                },
                                "text": OLD,
                            }
                        ],
                    },
                }
            )
        )
        stats = second.stats()
        assert stats["tracking"]["inEditor"] == 2
        deadline = time.monotonic() + 15
        while second.stats()["outcomes"]["pending"]:
            assert time.monotonic() < deadline, "the resumed proposals did not settle"
            time.sleep(0.2)
        assert second.close() == 0
    finally:
        if second.process.poll() is None:
            second.kill()
    outcomes = {r["path"]: r["outcome"] for r in query(capture_home, "SELECT * FROM proposals")}
    assert outcomes == {"kept.py": "kept", "undone.py": "undone"}
    vias = query(capture_home, "SELECT DISTINCT via FROM checkpoints WHERE window != 'late'")
    assert [v["via"] for v in vias] == ["editor"]  # measured in the reopened buffers
