"""Benchmark: time from a proposal to its commit, with 1, 100 and 1,000 live proposals in one
document, through a real `capture serve` driven over a pipe; and resident memory per live
proposal.

Run ``python tests/benchmarks/bench_proposal_commit.py`` (``--quick`` for a smoke run).

For each count N, a fresh server opens one 3,000-line document and receives N applied
``capture/proposal`` notifications (each one line of the document, spread over it); once the
store holds all N, ten more are sent one at a time and each is timed from the moment it is
written to the pipe to the moment a separate reader connection sees its row (polled every
millisecond). The peer is the same measure with one live proposal, in the same run: the ratio
says how much the time grows with the live proposals. Memory: the server's resident set with N
live proposals, minus the same with none, divided by N.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.bench_server import Peer, Servers, document, frame  # noqa: E402

LINES = 3_000
EXTRA = 10


def proposal(uri: str, lines: list[str], line: int) -> bytes:
    return frame(
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


def keystroke(uri: str, version: int) -> bytes:
    return frame(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": 0, "character": 0},
                            "end": {"line": 0, "character": 0},
                        },
                        "text": "x",
                    }
                ],
            },
        }
    )


def count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    except sqlite3.OperationalError:
        return 0
    try:
        return int(conn.execute("SELECT count(*) FROM proposals").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def wait_count(db: Path, wanted: int, timeout: float = 900.0) -> float:
    deadline = time.perf_counter() + timeout
    while True:
        if count(db) >= wanted:
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise RuntimeError(f"the store never held {wanted} proposals")
        time.sleep(0.001)


def measure(servers: Servers, live: int) -> dict[str, Any]:
    env = servers.fresh_env()
    db = Path(env["CAPTURE_HOME"]) / "data" / "capture.db"
    peer = Peer(servers.commands["capture"], env)
    peer.initialize(servers.root)
    try:
        path = servers.root / f"doc_{live}.py"
        text = document(LINES)
        path.write_text(text)
        uri = path.as_uri()
        lines = text.splitlines(keepends=True)
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
        peer.barrier()
        time.sleep(1.0)
        rss_none = peer.rss_mb()
        step = max((LINES - EXTRA) // max(live, 1), 1)
        started = time.perf_counter()
        peer.send(b"".join(proposal(uri, lines, (n * step) % LINES) for n in range(live)))
        backlog = wait_count(db, live) - started
        time.sleep(3.0)  # the delayed region write after the burst
        peer.barrier()
        rss_live = peer.rss_mb()
        times = []
        for k in range(EXTRA):
            sent = time.perf_counter()
            peer.send(proposal(uri, lines, LINES - 1 - k))
            times.append(wait_count(db, live + k + 1) - sent)
        typed = []
        for k in range(EXTRA):
            # A keystroke at the top moves every region: the proposal after it finds the
            # regions moved since the store last saw them.
            peer.send(keystroke(uri, 2 + k))
            sent = time.perf_counter()
            peer.send(proposal(uri, lines, LINES - 1 - EXTRA - k))
            typed.append(wait_count(db, live + EXTRA + k + 1) - sent)
        _, reply = peer.wait(peer.request("workspace/executeCommand", {"command": "capture.stats"}))
        followed = reply["result"]["tracking"]["inEditor"]
        return {
            "live": live,
            "followed": followed,
            "median_ms": statistics.median(times) * 1000,
            "max_ms": max(times) * 1000,
            "typed_median_ms": statistics.median(typed) * 1000,
            "typed_max_ms": max(typed) * 1000,
            "backlog_s": backlog,
            "kb_per_live": (rss_live - rss_none) * 1024 / live if live else 0.0,
        }
    finally:
        peer.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 and 100 live proposals only")
    args = parser.parse_args()
    counts = (1, 100) if args.quick else (1, 100, 1_000)
    with tempfile.TemporaryDirectory(prefix="bench-commit-") as tmp:
        servers = Servers(Path(tmp))
        results = [measure(servers, n) for n in counts]
    base = results[0]["median_ms"]
    for r in results:
        print(json.dumps(r), flush=True)
    print()
    typed_base = results[0]["typed_median_ms"]
    print(
        "| live proposals in the document | proposal to commit, median (max) of 10 | "
        "vs 1 live | the same right after a keystroke | vs 1 live | "
        "a burst of N committed after | RSS per live proposal |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        per = f"{r['kb_per_live']:.1f} KB" if r["live"] > 1 else "-"
        print(
            f"| {r['live']:,} | {r['median_ms']:.0f} ms ({r['max_ms']:.0f} ms) | "
            f"{r['median_ms'] / base:.1f}x | {r['typed_median_ms']:.0f} ms "
            f"({r['typed_max_ms']:.0f} ms) | {r['typed_median_ms'] / typed_base:.1f}x | "
            f"{r['backlog_s']:.2f} s | {per} |"
        )


if __name__ == "__main__":
    main()
