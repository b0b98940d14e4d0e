"""Benchmark: time from a proposal to its commit, with 1, 100 and 1,000 live proposals in one
document, through a real `capture serve` driven over a pipe; and resident memory per live
proposal.

Run ``python tests/benchmarks/bench_proposal_commit.py`` (``--quick`` for a smoke run).

For each count N, a fresh server opens one 3,000-line document (about 165 kB) and receives N
applied ``capture/proposal`` notifications in one write (each one line of the document, spread
over it): "a burst of N committed after" is the time until a separate reader connection sees
all N rows. Then ten more are sent one at a time, each timed from the moment it is written to
the pipe to the moment the reader sees its row (polled every millisecond); then ten more, each
right after a keystroke at the top of the document (which moves every region, so the store's
copy of them is stale when the proposal arrives). The peer is the same measure with one live
proposal, in the same run: the ratios say how much the time grows with the live proposals.

Memory: the server's resident set (VmRSS) with the N live proposals, minus the same just
before them (after a warm-up document with ten proposals, so that what any first proposal
loads is not charged to the N), divided by N.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from capture.connection import sqlite3

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.bench_server import Peer, Servers, document, frame  # noqa: E402

LINES = 3_000
EXTRA = 10
WARM = 10


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


def open_document(peer: Peer, path: Path, text: str) -> str:
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
    peer.barrier()
    return uri


def measure(servers: Servers, live: int) -> dict[str, Any]:
    env = servers.fresh_env()
    db = Path(env["CAPTURE_HOME"]) / "data" / "capture.db"
    peer = Peer(servers.commands["capture"], env)
    peer.initialize(servers.root)
    try:
        text = document(LINES)
        lines = text.splitlines(keepends=True)
        # A first document with a few proposals warms what any first proposal loads (lazy
        # imports, the store's statement cache): the memory measured is what the N add.
        warm = open_document(peer, servers.root / f"warm_{live}.py", text)
        peer.send(b"".join(proposal(warm, lines, n) for n in range(WARM)))
        wait_count(db, WARM)
        uri = open_document(peer, servers.root / f"doc_{live}.py", text)
        time.sleep(3.0)  # the delayed region write of the warm-up
        peer.barrier()
        rss_none = peer.rss_mb()
        step = max((LINES - EXTRA) // max(live, 1), 1)
        started = time.perf_counter()
        peer.send(b"".join(proposal(uri, lines, (n * step) % LINES) for n in range(live)))
        backlog = wait_count(db, WARM + live) - started
        time.sleep(3.0)  # the delayed region write after the burst
        peer.barrier()
        rss_live = peer.rss_mb()
        times = []
        for k in range(EXTRA):
            sent = time.perf_counter()
            peer.send(proposal(uri, lines, LINES - 1 - k))
            times.append(wait_count(db, WARM + live + k + 1) - sent)
        typed = []
        for k in range(EXTRA):
            # A keystroke at the top moves every region: the proposal after it finds the
            # regions moved since the store last saw them.
            peer.send(keystroke(uri, 2 + k))
            sent = time.perf_counter()
            peer.send(proposal(uri, lines, LINES - 1 - EXTRA - k))
            typed.append(wait_count(db, WARM + live + EXTRA + k + 1) - sent)
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
