"""Benchmark: `capture serve` against a bare pygls 2.1.1 server, both driven over real pipes.

Run ``python tests/benchmarks/bench_server.py`` (about two minutes; ``--quick`` for a smoke run).
The peer is the smallest pygls server there is: a ``LanguageServer`` with a no-op ``didChange``
handler (pygls still keeps its own copy of the document). Both run in this invocation, one after
the other, on the same messages. It prints each figure, the ratios, and a markdown table.

- throughput: 20,000 one-character ``didChange`` on a 100-line document holding 50 live
  proposals, then on a 20,000-line (about 1 MB) one. Timed from the first change sent to the
  answer to a request sent right after the last (both servers answer in order). For capture,
  also the time until its writer thread committed everything those changes caused (a
  ``capture.stats`` request: answered after the writes queued before it).
- memory: resident set size after 1,000 and after 100,000 changes (same 100-line document).
- start-up: process start to the ``initialize`` response, median of 15 starts (after one that
  creates the store).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BARE = Path(__file__).with_name("bare_pygls_server.py")
SEED = 20261202


def frame(obj: dict[str, Any]) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Peer:
    """A server process with a reader thread collecting responses by id."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.started = time.perf_counter()
        self.responses: dict[int, tuple[float, dict[str, Any]]] = {}
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self._next = 0

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line == b"\r\n":
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            if "id" in message and "method" not in message:
                with self._cond:
                    self.responses[message["id"]] = (time.perf_counter(), message)
                    self._cond.notify_all()

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, method: str, params: Any = None) -> int:
        self._next += 1
        self.send(frame({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}))
        return self._next

    def wait(self, msg_id: int, timeout: float = 600) -> tuple[float, dict[str, Any]]:
        with self._cond:
            if not self._cond.wait_for(lambda: msg_id in self.responses, timeout):
                raise RuntimeError(f"no answer to {msg_id}")
            return self.responses[msg_id]

    def initialize(self, root: Path) -> float:
        answered, _ = self.wait(
            self.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": root.as_uri(),
                    "capabilities": {},
                    "workspaceFolders": [{"uri": root.as_uri(), "name": "bench"}],
                },
            )
        )
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        return answered - self.started

    def barrier(self) -> float:
        """A request no server here implements: answered (with an error) in order."""
        answered, _ = self.wait(
            self.request(
                "textDocument/hover",
                {
                    "textDocument": {"uri": "file:///bench/none.py"},
                    "position": {"line": 0, "character": 0},
                },
            )
        )
        return answered

    def rss_mb(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        try:
            self.wait(self.request("shutdown"), timeout=60)
            self.send(frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
            self.process.wait(timeout=30)
        except (RuntimeError, BrokenPipeError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def document(lines: int) -> str:
    return "".join(
        f"value_{i} = compute({i}, 'padding to a realistic width')\n" for i in range(lines)
    )


def changes(uri: str, lines: int, count: int, first_version: int, rng: random.Random) -> bytes:
    out = []
    for k in range(count):
        line = rng.randrange(lines)
        character = rng.randrange(40)
        out.append(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": first_version + k},
                        "contentChanges": [
                            {
                                "range": {
                                    "start": {"line": line, "character": character},
                                    "end": {"line": line, "character": character},
                                },
                                "text": "x",
                            }
                        ],
                    },
                }
            )
        )
    return b"".join(out)


def proposals(uri: str, text: str, count: int) -> bytes:
    """``count`` applied agent edits, each one line of the document, spread over it."""
    lines = text.splitlines(keepends=True)
    step = max(len(lines) // count, 1)
    out = []
    for n in range(count):
        line = (n * step) % len(lines)
        out.append(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "capture/proposal",
                    "params": {
                        "uri": uri,
                        "agent": "bench",
                        "oldText": "old\n",
                        "newText": lines[line],
                        "range": {
                            "start": {"line": line, "character": 0},
                            "end": {"line": line + 1, "character": 0},
                        },
                    },
                }
            )
        )
    return b"".join(out)


class Servers:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = str(ROOT) + os.pathsep + self.env.get("PYTHONPATH", "")
        self.runs = 0
        self.root = home / "project"
        self.root.mkdir(exist_ok=True)
        self.commands = {
            "capture": [sys.executable, "-m", "capture", "serve"],
            "pygls": [sys.executable, str(BARE)],
        }

    def fresh_env(self) -> dict[str, str]:
        """Each server starts with an empty store, so that no measure inherits another's."""
        self.runs += 1
        return {**self.env, "CAPTURE_HOME": str(self.home / f"capture-home-{self.runs}")}

    def start(self, name: str) -> Peer:
        peer = Peer(self.commands[name], self.fresh_env())
        peer.initialize(self.root)
        return peer

    def open(self, peer: Peer, lines: int, live: int) -> str:
        path = self.root / f"doc_{lines}.py"
        text = document(lines)
        path.write_text(text)
        uri = path.as_uri()
        peer.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {
                            "uri": uri,
                            "languageId": "python",
                            "version": 1,
                            "text": text,
                        }
                    },
                }
            )
        )
        if live:
            peer.send(proposals(uri, text, live))
        peer.barrier()
        return uri


def throughput(servers: Servers, name: str, lines: int, count: int) -> dict[str, float]:
    peer = servers.start(name)
    try:
        uri = servers.open(peer, lines, live=50)
        if name == "capture":  # every proposal is recorded and followed before timing
            peer.wait(peer.request("workspace/executeCommand", {"command": "capture.stats"}))
        burst = changes(uri, lines, count, 2, random.Random(SEED))
        start = time.perf_counter()
        threading.Thread(target=peer.send, args=(burst,), daemon=True).start()
        done = peer.barrier() - start
        result = {"seconds": done, "per_second": count / done}
        if name == "capture":
            answered, reply = peer.wait(
                peer.request("workspace/executeCommand", {"command": "capture.stats"})
            )
            result["committed_seconds"] = answered - start
            result["live"] = reply["result"]["tracking"]["inEditor"]
        return result
    finally:
        peer.stop()


def memory(servers: Servers, name: str, small: int, large: int) -> dict[str, float]:
    peer = servers.start(name)
    try:
        uri = servers.open(peer, 100, live=50)
        rng = random.Random(SEED)
        peer.send(changes(uri, 100, small, 2, rng))
        peer.barrier()
        time.sleep(2.5)  # let capture's delayed region write run in both states
        peer.barrier()
        after_small = peer.rss_mb()
        sent = small
        while sent < large:
            batch = min(20_000, large - sent)
            # One-character inserts spread over a 100-line document, re-opened to stay small.
            peer.send(changes(uri, 100, batch, 2 + sent, rng))
            sent += batch
            peer.barrier()
        time.sleep(2.5)
        peer.barrier()
        return {"small": after_small, "large": peer.rss_mb()}
    finally:
        peer.stop()


def startup(servers: Servers, name: str, runs: int) -> float:
    """Median start-up time with an existing store (a first start also creates it)."""
    env = servers.fresh_env()
    times = []
    for run in range(runs + 1):
        peer = Peer(servers.commands[name], env)
        elapsed = peer.initialize(servers.root)
        peer.stop()
        if run:
            times.append(elapsed)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer messages (a smoke run)")
    args = parser.parse_args()
    count = 2_000 if args.quick else 20_000
    small, large = (1_000, 10_000) if args.quick else (1_000, 100_000)
    runs = 3 if args.quick else 15
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        servers = Servers(Path(tmp))
        rows = []
        for lines in (100, 20_000):
            ours = throughput(servers, "capture", lines, count)
            peer = throughput(servers, "pygls", lines, count)
            ratio = ours["per_second"] / peer["per_second"]
            print(
                f"{count} didChange, {lines}-line document, 50 live proposals: capture "
                f"{ours['per_second']:,.0f}/s ({ours['live']:.0f} followed; all writes "
                f"committed after {ours['committed_seconds']:.2f} s), bare pygls "
                f"{peer['per_second']:,.0f}/s -> {ratio:.1f}x",
                flush=True,
            )
            rows.append(
                (
                    f"{count:,} one-character didChange, {lines:,}-line document "
                    f"({lines * 55 // 1000:,} kB), 50 live proposals",
                    f"{ours['per_second']:,.0f} changes/s",
                    f"{peer['per_second']:,.0f} changes/s",
                    f"{ratio:.1f}x faster",
                )
            )
        ours_mem = memory(servers, "capture", small, large)
        peer_mem = memory(servers, "pygls", small, large)
        growth = ours_mem["large"] - ours_mem["small"]
        peer_growth = peer_mem["large"] - peer_mem["small"]
        print(
            f"RSS after {small:,} / {large:,} didChange: capture {ours_mem['small']:.1f} / "
            f"{ours_mem['large']:.1f} MB (+{growth:.1f}), bare pygls {peer_mem['small']:.1f} / "
            f"{peer_mem['large']:.1f} MB (+{peer_growth:.1f})",
            flush=True,
        )
        rows.append(
            (
                f"resident memory growth from {small:,} to {large:,} didChange",
                f"+{growth:.1f} MB",
                f"+{peer_growth:.1f} MB",
                "limit +10 MB",
            )
        )
        ours_start = startup(servers, "capture", runs)
        peer_start = startup(servers, "pygls", runs)
        print(
            f"start to initialize response (median of {runs}): capture {ours_start * 1000:.0f} "
            f"ms, bare pygls {peer_start * 1000:.0f} ms",
            flush=True,
        )
        rows.append(
            (
                f"process start to initialize response (median of {runs})",
                f"{ours_start * 1000:.0f} ms",
                f"{peer_start * 1000:.0f} ms",
                f"{ours_start / peer_start:.1f}x the time",
            )
        )
    print()
    print("| measure | capture serve | bare pygls 2.1.1 | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
