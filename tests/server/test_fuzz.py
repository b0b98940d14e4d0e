"""10,000 random and malformed messages: the server keeps answering, and every valid event
sent among them is in the store."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

from capture.connection import sqlite3
from tests.support.rawlsp import RawClient, frame

TEXT = "".join(f"line {i}: some text 中文 😀\n" for i in range(200))
METHODS = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "capture/proposal",
    "capture/decision",
    "capture/undo",
    "capture/testRun",
    "workspace/didChangeWatchedFiles",
    "workspace/executeCommand",
    "textDocument/hover",
    "$/cancelRequest",
    "$/setTrace",
    "no/such/method",
]


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value of any type, sometimes hostile."""
    kind = rng.randrange(12 if depth < 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2**31, -(2**63), 10**30, 7])
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e308, 3.0])
    if kind == 4:
        return rng.choice(["", "x", "file:///nowhere/x.py", "\ud800", "😀" * 3, "a\x00b"])
    if kind == 5:
        return "z" * rng.choice([10, 1000, 100_000])
    if kind == 6:
        return rng.choice(["file:///tmp/unknown.py", "untitled:1", "http://x/y"])
    if kind in (7, 8):
        return [junk(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = [
        "uri",
        "range",
        "text",
        "textDocument",
        "contentChanges",
        "line",
        "character",
        "start",
        "end",
        "newText",
        "oldText",
        "id",
        "accepted",
        "command",
        "version",
    ]
    return {rng.choice(keys): junk(rng, depth + 1) for _ in range(rng.randrange(5))}


def position(rng: random.Random) -> dict[str, Any]:
    return {
        "line": rng.choice([0, 5, 199, 200, 201, 10**9, -3, 2**62]),
        "character": rng.choice([0, 3, 17, 40, 10**9, -1]),
    }


def malformed(rng: random.Random, uri: str) -> bytes:
    """One message that a correct server must survive."""
    kind = rng.randrange(14)
    method = rng.choice(METHODS)
    if kind == 0:  # not JSON at all
        return frame(rng.choice([b"{", b"}{", b"\xff\xfe\x00", b"nul", b"[1, 2", b'{"a": }']))
    if kind == 1:  # JSON, but not an object
        return frame(json.dumps(junk(rng)))
    if kind == 2:  # an object without the JSON-RPC fields
        return frame({"method": method, "params": junk(rng)})
    if kind == 3:  # a request with garbage params
        return frame(
            {
                "jsonrpc": "2.0",
                "id": rng.randrange(10**6, 10**7),
                "method": method,
                "params": junk(rng),
            }
        )
    if kind == 4:  # a notification with garbage params
        return frame({"jsonrpc": "2.0", "method": method, "params": junk(rng)})
    if kind == 5:  # a change to a document nobody opened
        return frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": "file:///tmp/never-opened.py", "version": 3},
                    "contentChanges": [{"text": "x"}],
                },
            }
        )
    if kind in (6, 7):  # positions out of range, reversed, negative
        return frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri, "version": rng.randrange(10**6)},
                    "contentChanges": [
                        {
                            "range": {"start": position(rng), "end": position(rng)},
                            "text": rng.choice(["", "a", "\r\n", "😀", "\n\n"]),
                        }
                    ],
                },
            }
        )
    if kind == 8:  # a wrongly typed change
        return frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {
                    "textDocument": {"uri": uri},
                    "contentChanges": [
                        {"range": {"start": {"line": "1", "character": 0}, "end": None}, "text": 5}
                    ],
                },
            }
        )
    if kind == 9:  # a capture/* notification with bad fields
        return frame(
            {
                "jsonrpc": "2.0",
                "method": rng.choice(METHODS[4:8]),
                "params": {
                    "uri": junk(rng),
                    "newText": junk(rng),
                    "accepted": junk(rng),
                    "command": junk(rng),
                    "edits": junk(rng),
                    "state": junk(rng),
                },
            }
        )
    if kind == 10:  # deeply nested
        depth = rng.choice([100, 5000, 200_000])
        return frame(
            b'{"jsonrpc": "2.0", "method": "x", "params": ' + b"[" * depth + b"]" * depth + b"}"
        )
    if kind == 11:  # a header block with no usable length, then nothing
        return rng.choice(
            [b"X-Junk: yes\r\n\r\n", b"Content-Length: -5\r\n\r\n", b"Content-Length: abc\r\n\r\n"]
        )
    if kind == 12:  # a huge text, rarely: past the tracking limit
        if rng.random() < 0.004:
            return frame(
                {
                    "jsonrpc": "2.0",
                    "method": "capture/proposal",
                    "params": {
                        "uri": uri,
                        "newText": "y" * 9_000_000,
                        "oldText": "",
                        "state": "shown",
                    },
                }
            )
        return frame({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "x" * 5000}})
    # a valid response to a request the server never made
    return frame({"jsonrpc": "2.0", "id": rng.randrange(100), "result": junk(rng)})


def test_ten_thousand_bad_messages(tmp_path: Path, capture_home: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    doc = root / "doc.py"
    doc.write_text(TEXT)
    rng = random.Random(20261202)
    client = RawClient(capture_home)
    try:
        client.initialize(root)
        uri = client.open(doc, TEXT)
        valid_runs: list[str] = []
        valid_shown: list[str] = []
        valid_edits = 0
        chunk: list[bytes] = []
        for i in range(10_000):
            chunk.append(malformed(rng, uri))
            if i % 40 == 0:  # valid events interleaved with the junk
                name = f"fuzz-run-{i}"
                valid_runs.append(name)
                chunk.append(
                    frame(
                        {
                            "jsonrpc": "2.0",
                            "method": "capture/testRun",
                            "params": {
                                "command": "pytest",
                                "name": name,
                                "exitCode": i % 2,
                                "passed": i,
                            },
                        }
                    )
                )
            if i % 97 == 0:
                editor_id = f"fuzz-shown-{i}"
                valid_shown.append(editor_id)
                chunk.append(
                    frame(
                        {
                            "jsonrpc": "2.0",
                            "method": "capture/proposal",
                            "params": {
                                "uri": uri,
                                "id": editor_id,
                                "state": "shown",
                                "oldText": "line 1",
                                "newText": f"line {i}",
                            },
                        }
                    )
                )
            if i % 13 == 0:
                valid_edits += 1
                chunk.append(
                    frame(
                        {
                            "jsonrpc": "2.0",
                            "method": "textDocument/didChange",
                            "params": {
                                "textDocument": {"uri": uri, "version": i},
                                "contentChanges": [
                                    {
                                        "range": {
                                            "start": {"line": 0, "character": 0},
                                            "end": {"line": 0, "character": 0},
                                        },
                                        "text": "#",
                                    }
                                ],
                            },
                        }
                    )
                )
            if len(chunk) >= 200:
                client.send(b"".join(chunk))
                chunk = []
        client.send(b"".join(chunk))
        stats = client.stats(timeout=60)  # the next valid request is answered
        assert stats["server"]["errors"] == 0, "a handler failed on bad input (see the log)"
        assert stats["server"]["badMessages"] > 5_000
        assert stats["server"]["requestFutures"] <= 2
        assert stats["tracking"]["openDocuments"] == 1
        hover = client.request_id(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}},
        )
        assert "error" in client.wait(hover)  # unknown method: an answer, not silence
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.kill()
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    try:
        names = [n for (n,) in conn.execute("SELECT name FROM test_runs WHERE name LIKE 'fuzz-%'")]
        run_events = conn.execute(
            "SELECT count(*) FROM events WHERE kind = 'test_run' AND payload LIKE '%fuzz-run-%'"
        ).fetchone()[0]
        shown = [k for (k,) in conn.execute("SELECT dedupe_key FROM proposals")]
    finally:
        conn.close()
    assert sorted(names) == sorted(valid_runs)
    assert run_events == len(valid_runs)
    assert sorted(shown) == sorted(f"lsp:{e}" for e in valid_shown)
    assert valid_edits > 700
