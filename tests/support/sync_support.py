"""Real HTTP servers on loopback for the sync tests: a test double of the team collector that
speaks the wire contract, a recording proxy to put in front of any collector, and the real
collector (`capture collector serve`) when this tree has it.

The double is a real server on a real socket; what it stores is what arrived on the wire, after
gzip decoding. It is good enough for the uploader's unit tests. The must-hold end-to-end tests
use `start_collector`, which runs the real collector when it is installed and says which one ran.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from capture.connection import sqlite3

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


@dataclass
class Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


class CollectorDouble:
    """Speaks `POST /v1/episodes` as the contract says: gzip'd JSON, bearer token, per-episode
    results, idempotency by `<id>:<revision>`. Failure modes are scripted by the test."""

    def __init__(self, token: str = "test-token", port: int = 0, keep_bodies: bool = True) -> None:
        self.token = token
        self.keep_bodies = keep_bodies
        self.port = port or free_port()
        self.bodies: list[bytes] = []  # decompressed request bodies, in arrival order
        self.headers: list[dict[str, str]] = []
        self.stored: dict[tuple[str, int], str] = {}  # (id, revision) -> episode JSON
        self.store_count: dict[tuple[str, int], int] = {}  # how many times each was stored
        self.script: list[Reply] = []  # replies to give before behaving normally
        self.reject: Callable[[dict[str, Any]], str | None] = lambda item: None
        self.refuse_batch: Callable[[list[dict[str, Any]]], Reply | None] = lambda items: None
        self.omit: Callable[[dict[str, Any]], bool] = lambda item: False
        self.hold = threading.Event()  # set: answer; clear: hold answers (after storing)
        self.hold.set()
        self.arrived = threading.Event()
        self.requests = 0
        self.lock = threading.Lock()
        self._server: _Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> CollectorDouble:
        double = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                double._handle(self)

            def do_GET(self) -> None:  # noqa: N802
                stats = {"stored": len(double.stored), "requests": double.requests}
                double._reply(self, Reply(200, json.dumps(stats).encode()))

        self._server = _Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self.hold.set()
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> CollectorDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _reply(self, h: BaseHTTPRequestHandler, reply: Reply) -> None:
        h.send_response(reply.status)
        for k, v in reply.headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(reply.body)))
        h.end_headers()
        h.wfile.write(reply.body)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        if h.path != "/v1/episodes":
            self._reply(h, Reply(404, b'{"error":"not_found"}'))
            return
        if h.headers.get("Authorization") != f"Bearer {self.token}":
            self._reply(h, Reply(401, b'{"error":"unauthorized","message":"bad token"}'))
            return
        body = gzip.decompress(raw) if h.headers.get("Content-Encoding") == "gzip" else raw
        with self.lock:
            self.requests += 1
            if self.keep_bodies:
                self.bodies.append(body)
                self.headers.append(dict(h.headers.items()))
            scripted = self.script.pop(0) if self.script else None
        self.arrived.set()
        if scripted is not None:
            self._reply(h, scripted)
            return
        items = json.loads(body)["episodes"]
        refusal = self.refuse_batch(items)
        if refusal is not None:
            self._reply(h, refusal)
            return
        results = []
        with self.lock:
            for item in items:
                key = (item["id"], item["revision"])
                error = self.reject(item)
                if error:
                    results.append({**_result(item), "status": "rejected", "error": error})
                    continue
                if key in self.stored:
                    status = "duplicate"
                else:
                    self.stored[key] = json.dumps(item["episode"], ensure_ascii=False)
                    self.store_count[key] = self.store_count.get(key, 0) + 1
                    status = "accepted"
                if not self.omit(item):
                    results.append({**_result(item), "status": status})
        self.hold.wait()
        self._reply(h, Reply(200, json.dumps({"results": results}).encode()))

    def stored_bytes(self) -> bytes:
        with self.lock:
            return "\n".join(self.stored.values()).encode()

    def episodes(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for episode_id, revision in self.stored:
            out.setdefault(episode_id, []).append(revision)
        return out


def _result(item: dict[str, Any]) -> dict[str, Any]:
    return {"id": item["id"], "revision": item["revision"]}


class RecordingProxy:
    """A loopback HTTP proxy in front of a collector: records each request body as the collector
    receives it (after gzip decoding) and can hold the collector's answers back."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removeprefix("http://")
        self.port = free_port()
        self.bodies: list[bytes] = []
        self.answers = 0
        self.hold = threading.Event()
        self.hold.set()
        self.forwarded = threading.Event()
        self._server: _Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RecordingProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                gz = self.headers.get("Content-Encoding") == "gzip"
                proxy.bodies.append(gzip.decompress(raw) if gz else raw)
                conn = HTTPConnection(proxy.upstream, timeout=60)
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")
                }
                conn.request("POST", self.path, body=raw, headers=headers)
                response = conn.getresponse()
                data = response.read()
                proxy.forwarded.set()
                proxy.hold.wait()
                self.send_response(response.status)
                for k, v in response.getheaders():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                proxy.answers += 1
                conn.close()

        self._server = _Server(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self.hold.set()
            self._server.shutdown()
            self._server.server_close()


def real_collector_available() -> bool:
    """The team collector is in this tree and its dependencies are installed."""
    if importlib.util.find_spec("sync.collector") is None:
        return False
    try:
        return all(importlib.util.find_spec(m) for m in ("sync.collector.serve", "fastapi"))
    except ModuleNotFoundError:
        return False


class RealCollector:
    """`capture collector serve` on SQLite, in its own process, with an ingest token."""

    kind = "real collector"

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.workdir = workdir
        self.db = workdir / "collector.db"
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        env = self._env()
        out = subprocess.run(
            [sys.executable, "-m", "capture", "collector", "token", "create",
             "--db", f"sqlite:///{self.db}", "--team", "t", "--scope", "ingest", "--json"],
            env=env, capture_output=True, check=True, timeout=60,
        )  # fmt: skip
        self.token = str(json.loads(out.stdout)["token"])

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env["CAPTURE_HOME"] = str(self.workdir / "collector-home")
        return env

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> RealCollector:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "capture", "collector", "serve", "--db", f"sqlite:///{self.db}",
             "--port", str(self.port), "--rate", "100000", "--burst", "100000"],
            env=self._env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"the collector exited: {err}") from None
                time.sleep(0.05)
        raise RuntimeError("the collector did not start listening")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None

    def episodes(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        with sqlite3.connect(self.db) as conn:
            for episode_id, revision in conn.execute("SELECT episode_id, revision FROM revisions"):
                out.setdefault(episode_id, []).append(int(revision))
        return out

    def stored_bytes(self) -> bytes:
        """Every byte of the collector's storage: the database and its write-ahead log."""
        data = b""
        for path in sorted(self.workdir.glob("collector.db*")):
            data += path.read_bytes()
        return data

    def stored_bodies(self) -> dict[tuple[str, int], str]:
        with sqlite3.connect(self.db) as conn:
            return {
                (r[0], int(r[1])): r[2]
                for r in conn.execute("SELECT episode_id, revision, body FROM revisions")
            }


class DoubleCollector:
    """The double, with the same surface as RealCollector."""

    kind = "collector test double"

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.double = CollectorDouble(port=port or free_port())
        self.token = self.double.token
        self.port = self.double.port

    @property
    def url(self) -> str:
        return self.double.url

    def start(self) -> DoubleCollector:
        self.double.start()
        return self

    def stop(self) -> None:
        self.double.stop()

    def episodes(self) -> dict[str, list[int]]:
        return self.double.episodes()

    def stored_bytes(self) -> bytes:
        return self.double.stored_bytes()

    def stored_bodies(self) -> dict[tuple[str, int], str]:
        return dict(self.double.stored)


def make_collector(workdir: Path, port: int | None = None) -> RealCollector | DoubleCollector:
    """The real collector when this tree has it, else the double (the test says which ran)."""
    if real_collector_available():
        return RealCollector(workdir, port)
    return DoubleCollector(workdir, port)


if __name__ == "__main__":
    # python -m tests.support.sync_support PORT TOKEN: the double as a process (benchmarks).
    double = CollectorDouble(token=sys.argv[2], port=int(sys.argv[1]), keep_bodies=False).start()
    print(f"listening on {double.url}", flush=True)
    threading.Event().wait()
