"""Headless Chromium driven over the DevTools protocol, with a minimal stdlib WebSocket client:
enough to load a page, collect its console errors, evaluate expressions and take screenshots."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["Browser", "find_chromium"]

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
    "--window-size=1200,900",
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _WebSocket:
    """RFC 6455, client side: masked text frames out, (fragmented) frames in."""

    def __init__(self, url: str, timeout: float) -> None:
        match = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert match, url
        host, port, path = match.group(1), int(match.group(2)), match.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("websocket handshake closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"websocket handshake refused: {head!r}")

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("websocket closed")
            data += chunk
        return data

    def send(self, text: str) -> None:
        payload = text.encode()
        head = bytes([0x81])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def recv(self) -> str:
        message = b""
        while True:
            b0, b1 = self._exact(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode == 0x9:  # ping
                self.sock.sendall(bytes([0x8A, 0x80]) + os.urandom(4))
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with a fresh profile, and one page in it."""

    def __init__(self, profile: Path, timeout: float = 30.0) -> None:
        exe = find_chromium()
        if exe is None:
            raise RuntimeError("chromium not found (Debian: apt-get install chromium)")
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = self._devtools_port()
        deadline = time.monotonic() + timeout
        ws_url = None
        while ws_url is None:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                pages = [t for t in json.load(r) if t.get("type") == "page"]
            if pages:
                ws_url = pages[0]["webSocketDebuggerUrl"]
            elif time.monotonic() > deadline:
                raise TimeoutError("no page target in chromium")
            else:
                time.sleep(0.1)
        self.ws = _WebSocket(ws_url, timeout)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _devtools_port(self) -> int:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + self.timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                # Keep reading what chromium logs, or a full pipe would block it.
                threading.Thread(target=self.proc.stderr.read, daemon=True).start()
                return int(match.group(1))
        raise RuntimeError("chromium did not start: " + "".join(seen[-10:]))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        me = self.next_id
        self.ws.send(json.dumps({"id": me, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == me:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            if "method" in message:
                self.events.append(message)

    def wait_for(self, event: str) -> dict[str, Any]:
        for e in self.events:
            if e["method"] == event:
                self.events.remove(e)
                return e
        while True:
            message = json.loads(self.ws.recv())
            if message.get("method") == event:
                return message
            if "method" in message:
                self.events.append(message)

    def open(self, url: str) -> None:
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.evaluate("1")  # drain what the load logged

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (CSP violations, failed
        loads) seen so far."""
        found = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                found.append(json.dumps(p.get("exceptionDetails", {}))[:300])
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                found.append(json.dumps(p.get("args", []))[:300])
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                found.append(p["entry"].get("text", "")[:300])
        return found

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(data["data"]))

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
