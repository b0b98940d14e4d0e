"""The wire: framing, the TCP transport, pygls's leaked futures, bad command lines."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

from server.app import FrameReader
from tests.conftest import RunCapture, capture_env
from tests.support.rawlsp import RawClient, frame


def test_frames_split_anywhere_and_garbage_skipped() -> None:
    one = frame({"jsonrpc": "2.0", "method": "a", "params": {"t": "é😀"}})
    two = frame({"jsonrpc": "2.0", "method": "b"})
    stream = b"junk\r\n\r\n" + one + b"Content-Length: x\r\n\r\n" + two
    stream += b"Content-Type: x\r\ncontent-length: 2\r\n\r\n{}"
    for size in (1, 3, 7, len(stream)):
        reader = FrameReader()
        bodies = []
        for i in range(0, len(stream), size):
            bodies.extend(reader.feed(stream[i : i + size]))
        assert [json.loads(b).get("method") for b in bodies] == ["a", "b", None]


def test_an_oversized_body_is_skipped_not_buffered() -> None:
    reader = FrameReader(max_body=100)
    big = b"Content-Length: 1000\r\n\r\n" + b"x" * 1000
    bodies = reader.feed(big[:500]) + reader.feed(big[500:] + frame({"method": "after"}))
    assert [json.loads(b)["method"] for b in bodies] == ["after"]
    assert reader.dropped == 1


def test_pygls_notification_futures_do_not_pile_up(tmp_path: Path, capture_home: Path) -> None:
    """Every notification pygls handles with a generator (all of its built-in ones) would leave
    a Future in protocol._request_futures forever in pygls 2.1.1."""
    client = RawClient(capture_home)
    try:
        client.initialize(tmp_path)
        burst = [
            frame({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": "off"}})
            for _ in range(2000)
        ]
        burst += [
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 10_000 + i,
                    "method": "workspace/executeCommand",
                    "params": {"command": "capture.stats"},
                }
            )
            for i in range(50)
        ]
        client.send(b"".join(burst))
        for i in range(50):
            client.wait(10_000 + i)
        stats = client.stats()
        assert stats["server"]["messages"] >= 2052
        assert stats["server"]["requestFutures"] <= 2  # this request's own, at most
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.kill()


def test_tcp_transport(tmp_path: Path, capture_home: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "capture", "serve", "--tcp", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=capture_env(capture_home),
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        match = re.search(r"listening on ([\d.]+):(\d+)", line)
        assert match, line
        with socket.create_connection((match.group(1), int(match.group(2))), timeout=20) as s:
            s.sendall(
                frame(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "processId": None,
                            "rootUri": tmp_path.as_uri(),
                            "capabilities": {},
                        },
                    }
                )
            )
            reply = _read_message(s)
            assert reply["id"] == 1
            assert reply["result"]["capabilities"]["textDocumentSync"]["change"] == 2
            s.sendall(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            assert _read_message(s)["id"] == 2
            s.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()


def _read_message(sock: socket.socket) -> dict:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    header, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"Content-Length: (\d+)", header).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += sock.recv(65536)
    return json.loads(body[:length])


def test_bad_tcp_address_is_one_line(run_capture: RunCapture) -> None:
    result = run_capture("serve", "--tcp", "nowhere")
    assert result.returncode == 2
    assert result.stderr.strip() == "capture: error: --tcp wants HOST:PORT, not 'nowhere'"


def test_a_stray_digit_in_a_length_does_not_deafen_the_reader() -> None:
    """A header announcing 100 MiB is refused, not skipped: the next message is read."""
    reader = FrameReader()
    after = frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
    stream = b"Content-Length: 104857600\r\n\r\n" + after + frame({"method": "exit"})
    bodies = []
    for i in range(0, len(stream), 7):
        bodies.extend(reader.feed(stream[i : i + 7]))
    assert [json.loads(b)["method"] for b in bodies] == ["shutdown", "exit"]
    assert reader.dropped == 1
    # the body, when one was sent, is dropped on the way to the next header, never held
    reader = FrameReader(max_body=1000)
    big = b"Content-Length: 200000\r\n\r\n" + json.dumps({"x": "y" * 199_990}).encode()
    bodies = reader.feed(big[:70_000]) + reader.feed(big[70_000:] + after)
    assert [json.loads(b)["method"] for b in bodies] == ["shutdown"]
    assert len(reader._buf) < 70_000


def test_a_100_mib_length_then_a_request_is_answered_and_shutdown_honoured(
    tmp_path: Path, capture_home: Path
) -> None:
    client = RawClient(capture_home)
    try:
        client.initialize(tmp_path)
        client.send(b"Content-Length: 104857600\r\n\r\n")
        stats = client.stats()
        assert stats["server"]["badFrames"] == 1
    finally:
        assert client.close() == 0
