"""Never lose, never stall: a real server over a real pipe meets stray bytes, hostile frames,
files outside the workspace, out-of-range numbers and lone surrogates, and keeps working."""

from __future__ import annotations

import json
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from capture.connection import sqlite3
from server.envelope import refusal
from server.framing import FrameReader, content_length
from server.surrogates import escape, unescape
from server.workspaces import changed_folders, inside
from tests.support.rawlsp import RawClient, change, frame, proposal

TEXT = "".join(f"line {i}\n" for i in range(20))


def project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    doc = root / "doc.py"
    doc.write_text(TEXT)
    return root, doc


def rows(home: Path, sql: str, *params: object) -> list[sqlite3.Row]:
    conn = sqlite3.connect(home / "data" / "capture.db", timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:  # no table yet: nothing recorded
        return []
    finally:
        conn.close()


def settled(home: Path, count: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = rows(home, "SELECT * FROM proposals")
        if len(found) >= count and all(r["settled_at"] is not None for r in found):
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {count} settled proposals")


def agent_edit(client: RawClient, uri: str, version: int, line: int, old: str, new: str) -> None:
    """The agent's edit lands in the buffer (replacing ``line``), then the plugin reports it."""
    client.send(change(uri, version, (line, 0), (line + 1, 0), new))
    client.send(proposal(uri, old, new, line))


def test_the_reader_resynchronises_after_stray_bytes() -> None:
    one = frame({"method": "a"})
    two = frame({"method": "b"})
    short = b"Content-Length: 4\r\n\r\n" + frame({"x": 1})[-12:]  # body longer than said
    stream = b"\x00\xffZ" + one + b"ab\r\n" + two + short + frame({"method": "c"})
    for size in (1, 5, len(stream)):
        reader = FrameReader()
        bodies = []
        for i in range(0, len(stream), size):
            bodies.extend(reader.feed(stream[i : i + size]))
        methods = [json.loads(b).get("method") for b in bodies if b.startswith(b'{"')]
        assert methods == ["a", "b", "c"]
        assert reader.resynced == 3  # before one, before two, and the short body's rest
    assert content_length(b"X-A: 1\r\nContent-Length: 7") == (7, 0)  # other headers: fine
    assert content_length(b"junkcontent-length : 7") == (7, 4)
    assert content_length(b"Content-Length: -1") == (None, 0)


def test_envelopes_that_pygls_cannot_take() -> None:
    assert refusal({"jsonrpc": "2.0", "method": "x"}) is None
    assert refusal({"jsonrpc": "2.0", "id": "a", "method": "x"}) is None
    assert refusal({"jsonrpc": "2.0", "id": None, "error": {}}) is None  # a response
    assert refusal({"method": 5}) == "the method must be a string"
    for bad in (2**31, 2**70, -(2**40), 1.5, True, [1], {"a": 1}, None, "x" * 1001):
        assert refusal({"id": bad, "method": "x"}) is not None, bad
    assert refusal({"jsonrpc": "2.0"}) is not None


def test_surrogate_escape_keeps_lengths_and_round_trips() -> None:
    text = "a\ud800b\udfff😀c"
    escaped = escape(text)
    assert len(escaped) == len(text)
    escaped.encode("utf-8")  # storable
    assert unescape(escaped) == text
    assert escape("plain") == "plain"


def test_folders_change_and_containment() -> None:
    folders = changed_folders(
        ["/w/a"],
        {"event": {"added": [{"uri": "file:///w/b", "name": "b"}], "removed": []}},
    )
    assert folders == ["/w/a", "/w/b"]
    removed = {"event": {"added": [], "removed": [{"uri": "file:///w/a", "name": "a"}]}}
    assert changed_folders(folders, removed) == ["/w/b"]
    assert inside("/w/a/x.py", ["/w/a"])
    assert not inside("/w/a/../etc/passwd", ["/w/a"])
    assert not inside("/w/ab/x.py", ["/w/a"])
    assert not inside("relative/x.py", ["/w/a"])


@pytest.fixture
def client(capture_home: Path) -> Any:
    raw = RawClient(capture_home)
    yield raw
    if raw.process.poll() is None:
        raw.kill()


def test_three_stray_bytes_then_valid_traffic(
    tmp_path: Path, capture_home: Path, client: RawClient
) -> None:
    root, doc = project(tmp_path)
    client.initialize(root)
    uri = client.open(doc, TEXT)
    client.send(b"\x00\xffZ")  # three stray bytes glued to the next header
    agent_edit(client, uri, 2, 3, "line 3\n", "agent line\n")
    stats = client.stats()
    assert stats["server"]["badFrames"] == 1
    assert client.close() == 0
    (row,) = rows(capture_home, "SELECT * FROM proposals")
    assert row["path"] == "doc.py"


def hostile(rng: random.Random, i: int) -> bytes:
    """One bad frame or message of many kinds."""
    kind = i % 10
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(3))  # stray bytes
    if kind == 1:
        return rng.choice([b"Content-Length: abc\r\n\r\n", b"X-Junk\r\n\r\n", b"\r\n\r\n"])
    if kind == 2:
        return frame(rng.choice([b"{", b"\xff\xfe", b"[1,", b'{"a": }']))  # not JSON
    if kind == 3:
        return frame(b"Content-Length: 2\r\n\r\n")  # a frame inside a frame
    if kind == 4:  # a non-string method, with and without an id
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": rng.choice([5, None, [], {}])}
        if rng.random() < 0.5:
            body["id"] = i
        return frame(body)
    if kind == 5:  # huge and odd ids
        return frame(
            {
                "jsonrpc": "2.0",
                "id": rng.choice([2**70, -(2**70), 1.5, True, [1], {"a": 1}]),
                "method": "workspace/executeCommand",
                "params": {"command": "capture.stats"},
            }
        )
    if kind == 6:  # wrong types in a test run
        return frame(
            {
                "jsonrpc": "2.0",
                "method": "capture/testRun",
                "params": {
                    "command": "pytest",
                    "exitCode": rng.choice([2**70, "1", 1.5, -(2**65)]),
                },
            }
        )
    if kind == 7:  # a short Content-Length: the rest of the body precedes the next header
        body_bytes = json.dumps({"jsonrpc": "2.0", "method": "$/setTrace"}).encode()
        return b"Content-Length: 10\r\n\r\n" + body_bytes
    if kind == 8:  # hostile cwd values
        return frame(
            {
                "jsonrpc": "2.0",
                "method": "capture/testRun",
                "params": {
                    "command": "pytest",
                    "cwd": rng.choice(["relative/x", "/nowhere/at/all", "\x00", "", "/"]),
                },
            }
        )
    return frame({"jsonrpc": "2.0", "method": "capture/proposal", "params": {"uri": 7}})


def test_a_thousand_hostile_frames(tmp_path: Path, capture_home: Path, client: RawClient) -> None:
    root, doc = project(tmp_path)
    client.initialize(root)
    rng = random.Random(20261204)
    names = []
    chunk = []
    for i in range(1000):
        chunk.append(hostile(rng, i))
        name = f"after-{i}"
        names.append(name)
        chunk.append(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "capture/testRun",
                    "params": {"command": "pytest", "name": name, "exitCode": 0},
                }
            )
        )
        if len(chunk) >= 100:
            client.send(b"".join(chunk))
            chunk = []
    client.send(b"".join(chunk))
    stats = client.stats(timeout=60)
    assert stats["server"]["errors"] == 0, "a handler failed on bad input (see the log)"
    assert stats["server"]["badFrames"] >= 300
    assert client.close() == 0
    recorded = [r["name"] for r in rows(capture_home, "SELECT name FROM test_runs")]
    assert sorted(recorded) == sorted(names), "a hostile run was recorded, or a valid one lost"
    roots = [r["root"] for r in rows(capture_home, "SELECT root FROM workspaces")]
    assert roots == [str(root.resolve())], "hostile cwd values made workspace rows"


def test_a_proposal_outside_the_workspace_is_refused(
    tmp_path: Path, capture_home: Path, client: RawClient
) -> None:
    root, doc = project(tmp_path)
    client.initialize(root)
    outside = "file:///etc/passwd"
    client.send(proposal(outside, "", "intruder\n", 0))
    client.send(proposal(doc.as_uri(), "line 1\n", "inside\n", 1))
    stats = client.stats()
    assert client.close() == 0
    found = rows(capture_home, "SELECT path FROM proposals")
    assert [r["path"] for r in found] == ["doc.py"]
    assert stats["server"]["refusedOutside"] == 1
    texts = rows(capture_home, "SELECT path, text FROM tracked_files")
    assert all("root:" not in (r["text"] or "") for r in texts)
    events = rows(capture_home, "SELECT payload FROM events")
    assert all("passwd" not in r["payload"] for r in events)


def test_outside_proposals_may_be_allowed(
    tmp_path: Path, capture_home: Path, client: RawClient
) -> None:
    root, doc = project(tmp_path)
    other = tmp_path / "elsewhere.py"
    other.write_text("x = 1\n")
    client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "initializationOptions": {"allowOutsideWorkspace": True},
        },
    )
    client.notify("initialized", {})
    client.send(proposal(other.as_uri(), "x = 1\n", "x = 2\n", 0))
    client.stats()
    assert client.close() == 0
    assert len(rows(capture_home, "SELECT * FROM proposals")) == 1


def test_workspace_folders_change(tmp_path: Path, capture_home: Path, client: RawClient) -> None:
    root, doc = project(tmp_path)
    second = tmp_path / "second"
    second.mkdir()
    (second / "b.py").write_text("b = 1\n")
    client.initialize(root)
    client.send(proposal((second / "b.py").as_uri(), "b = 1\n", "b = 2\n", 0))
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        {"event": {"added": [{"uri": second.as_uri(), "name": "second"}], "removed": []}},
    )
    client.send(proposal((second / "b.py").as_uri(), "b = 1\n", "b = 3\n", 0))
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        {"event": {"added": [], "removed": [{"uri": root.as_uri(), "name": "project"}]}},
    )
    client.send(proposal(doc.as_uri(), "line 1\n", "gone\n", 1))
    stats = client.stats()
    assert client.close() == 0
    assert stats["server"]["refusedOutside"] == 2
    assert [r["path"] for r in rows(capture_home, "SELECT path FROM proposals")] == ["b.py"]


def test_an_oversized_exit_code_is_refused(
    tmp_path: Path, capture_home: Path, client: RawClient
) -> None:
    root, doc = project(tmp_path)
    client.initialize(root)
    for code in (2**70, 2**40, -(2**63) - 1):
        client.notify("capture/testRun", {"command": "pytest", "name": "big", "exitCode": code})
    client.notify("capture/testRun", {"command": "pytest", "name": "fine", "exitCode": 3})
    stats = client.stats()
    assert stats["server"]["badMessages"] == 3
    assert stats["server"]["failedWrites"] == 0
    assert client.close() == 0
    found = rows(capture_home, "SELECT name, exit_code FROM test_runs")
    assert [(r["name"], r["exit_code"]) for r in found] == [("fine", 3)]


EARLY = 0.9231


@pytest.mark.parametrize("typed", ["x", "\ud800"])
def test_a_lone_surrogate_is_a_character_like_any_other(
    tmp_path: Path, capture_home: Path, client: RawClient, typed: str
) -> None:
    root, doc = project(tmp_path)
    client.initialize(root)
    uri = client.open(doc, TEXT)
    agent_edit(client, uri, 2, 5, "line 5\n", "agent early\n")  # before the surrogate
    client.send(change(uri, 3, (0, 2), (0, 2), typed))  # outside any region
    client.send(change(uri, 4, (5, 5), (5, 5), typed))  # inside the early proposal's region
    agent_edit(client, uri, 5, 12, "line 12\n", "agent late\n")  # after it
    client.send(change(uri, 6, (14, 3), (14, 3), typed))  # after the late region
    stats = client.stats()
    assert stats["server"]["errors"] == 0
    assert stats["server"]["failedWrites"] == 0
    settled(capture_home, 2)
    assert client.close() == 0
    by_text = {
        r["new_text"]: (r["outcome"], round(r["similarity"], 4))
        for r in rows(
            capture_home,
            "SELECT h.new_text, p.outcome, p.similarity FROM proposals p "
            "JOIN hunks h ON h.proposal_id = p.id",
        )
    }
    # One character typed into the early region, none into the late one: the same figures
    # whichever character it was.
    assert by_text == {"agent early\n": ("kept", EARLY), "agent late\n": ("kept", 1.0)}


def _methods(stream: bytes, size: int) -> tuple[list[str | None], FrameReader]:
    reader = FrameReader()
    bodies = []
    for i in range(0, len(stream), size):
        bodies.extend(reader.feed(stream[i : i + size]))
    methods = []
    for body in bodies:
        try:
            methods.append(json.loads(body).get("method"))
        except ValueError:
            methods.append(None)
    return methods, reader


def test_a_length_that_overruns_its_message_does_not_swallow_the_next() -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "a"}).encode()
    for extra in (1, 40, 5000):
        # The header announces more than the message has before the next header.
        overrun = b"Content-Length: %d\r\n\r\n" % (len(body) + extra) + body
        typed = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        for glue in (b"", typed):
            stream = overrun + glue + frame({"method": "b"}) + frame({"method": "c"})
            for size in (1, 7, len(stream)):
                methods, reader = _methods(stream, size)
                assert methods == ["a", "b", "c"], (extra, glue, size)
                assert reader.overrun == 1
    # The last message of a burst, overrun, with its successor complete: handled at once,
    # without waiting for bytes the client will never send.
    reader = FrameReader()
    overrun = b"Content-Length: 9999\r\n\r\n" + body
    assert [json.loads(b)["method"] for b in reader.feed(overrun + frame({"method": "b"}))] == [
        "a",
        "b",
    ]


def test_a_frame_that_holds_a_header_is_taken_at_its_length() -> None:
    inner = b"Content-Length: 2\r\n\r\n"
    stream = frame(inner) + frame({"method": "b"})
    for size in (1, 5, len(stream)):
        methods, reader = _methods(stream, size)
        assert methods == [None, "b"]
        assert reader.overrun == 0


def test_an_overrun_frame_then_a_request_is_answered(
    tmp_path: Path, capture_home: Path, client: RawClient
) -> None:
    root, doc = project(tmp_path)
    client.initialize(root)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "capture/testRun",
            "params": {"command": "pytest", "name": "overrun", "exitCode": 0},
        }
    ).encode()
    client.send(b"Content-Length: %d\r\n\r\n" % (len(body) + 300) + body)
    stats = client.stats()  # answered: the server does not wait for the 300 bytes
    assert stats["server"]["badFrames"] == 1
    client.notify("capture/testRun", {"command": "pytest", "name": "after", "exitCode": 0})
    assert client.close() == 0
    names = sorted(r["name"] for r in rows(capture_home, "SELECT name FROM test_runs"))
    assert names == ["after", "overrun"]
