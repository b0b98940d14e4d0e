"""A byte-level LSP client for the tests that must send what no library would: malformed
frames, bursts faster than any editor, and a SIGKILL in the middle."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import capture_env
from tests.support.lspkit import SERVER


def frame(body: bytes | str | dict[str, Any]) -> bytes:
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    def __init__(self, home: Path, **env: str) -> None:
        self.process = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=capture_env(home, **env),
        )
        self.responses: dict[Any, dict[str, Any]] = {}
        self.other: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._arrived = threading.Condition()
        self._ids = itertools.count(1)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            assert length is not None, "the server sent a header without Content-Length"
            message = json.loads(out.read(length))
            if "id" in message and "method" not in message:
                with self._arrived:
                    self.responses[message["id"]] = message
                    self._arrived.notify_all()
            else:
                self.other.put(message)

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def request_id(self, method: str, params: Any = None) -> int:
        msg_id = next(self._ids)
        self.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        return msg_id

    def wait(self, msg_id: Any, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while msg_id not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise AssertionError(f"no response to request {msg_id}")
                self._arrived.wait(min(left, 0.1))
            return self.responses[msg_id]

    def request(self, method: str, params: Any = None, timeout: float = 20.0) -> Any:
        response = self.wait(self.request_id(method, params), timeout)
        assert "error" not in response, response
        return response.get("result")

    def initialize(self, root: Path) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            },
        )
        self.notify("initialized", {})
        return result  # type: ignore[no-any-return]

    def stats(self, timeout: float = 20.0) -> dict[str, Any]:
        result = self.request(
            "workspace/executeCommand", {"command": "capture.stats"}, timeout=timeout
        )
        return result  # type: ignore[no-any-return]

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "python",
                    "version": version,
                    "text": text,
                }
            },
        )
        return uri

    def close(self) -> int:
        """shutdown, exit, and the exit code."""
        if self.process.poll() is None:
            try:
                self.request("shutdown", None, timeout=20)
                self.notify("exit", None)
                return self.process.wait(timeout=20)
            except (AssertionError, BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
        return self.process.wait()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


def change(
    uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str
) -> bytes:
    """One incremental didChange, positions as (line, character)."""
    rng = {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }
    return frame(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": rng, "text": text}],
            },
        }
    )


def proposal(uri: str, old_text: str, new_text: str, line: int, **fields: Any) -> bytes:
    """A capture/proposal for an edit that starts at column 0 of ``line``."""
    params = {
        "uri": uri,
        "oldText": old_text,
        "newText": new_text,
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
        "agent": "test-agent",
        **fields,
    }
    return frame({"jsonrpc": "2.0", "method": "capture/proposal", "params": params})
