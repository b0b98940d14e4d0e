"""The fault suite's long runs, against a real `capture serve` over a pipe.

Run ``python tests/benchmarks/bench_faults.py`` (``--quick`` for a smoke run).

1. 10,000 hostile frames and messages (the ten kinds of ``tests/server/test_faults.py``: stray
   bytes, headers without a usable length, bodies that are not JSON, frames inside frames,
   non-string methods, odd ids, out-of-range fields, short lengths, hostile cwd values, bad
   URIs), each followed by a valid ``capture/testRun`` with a name of its own. Every valid one
   must be in the store afterwards, each once, and the server must answer and exit cleanly.
   The suite sends 1,000 of them; this sends ten times as many.
2. Resident memory over 100,000 hostile messages, against the peer: the same server, in the
   same run, given 100,000 valid messages (one-character ``didChange`` in a document with no
   live proposal). Both measured after a first 10,000 of their kind, so that what the first
   messages load is not counted.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from capture.connection import sqlite3

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.bench_server import Peer, Servers, changes, document, frame  # noqa: E402
from tests.server.test_faults import hostile  # noqa: E402

SEED = 20261204


def valid_run(name: str) -> bytes:
    return frame(
        {
            "jsonrpc": "2.0",
            "method": "capture/testRun",
            "params": {"command": "pytest", "name": name, "exitCode": 0},
        }
    )


def stats(peer: Peer) -> dict[str, Any]:
    _, reply = peer.wait(peer.request("workspace/executeCommand", {"command": "capture.stats"}))
    return reply["result"]  # type: ignore[no-any-return]


def interleaved(servers: Servers, count: int) -> dict[str, Any]:
    env = servers.fresh_env()
    db = Path(env["CAPTURE_HOME"]) / "data" / "capture.db"
    peer = Peer(servers.commands["capture"], env)
    peer.initialize(servers.root)
    rng = random.Random(SEED)
    names = [f"after-{i}" for i in range(count)]
    started = time.perf_counter()
    chunk: list[bytes] = []
    for i, name in enumerate(names):
        chunk.append(hostile(rng, i))
        chunk.append(valid_run(name))
        if len(chunk) >= 200:
            peer.send(b"".join(chunk))
            chunk = []
    peer.send(b"".join(chunk))
    figures = stats(peer)["server"]
    elapsed = time.perf_counter() - started
    peer.stop()
    code = peer.process.returncode
    conn = sqlite3.connect(db)
    try:
        recorded = [r[0] for r in conn.execute("SELECT name FROM test_runs")]
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()
    return {
        "sent": count,
        "recorded": len(set(recorded) & set(names)),
        "duplicates": len(recorded) - len(set(recorded)),
        "strays": len(set(recorded) - set(names)),
        "bad_frames": figures["badFrames"],
        "bad_messages": figures["badMessages"],
        "errors": figures["errors"],
        "exit_code": code,
        "integrity": integrity,
        "seconds": elapsed,
    }


def hostile_stream(rng: random.Random, start: int, count: int) -> bytes:
    return b"".join(hostile(rng, start + i) for i in range(count))


def memory(servers: Servers, kind: str, warm: int, count: int) -> dict[str, float]:
    peer = servers.start("capture")
    try:
        rng = random.Random(SEED)
        if kind == "valid":
            path = servers.root / "memory_doc.py"
            text = document(100)
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

            def batch(start: int, n: int) -> bytes:
                return changes(uri, 100, n, 2 + start, rng)
        else:

            def batch(start: int, n: int) -> bytes:
                return hostile_stream(rng, start, n)

        sent = 0
        while sent < warm:
            n = min(10_000, warm - sent)
            peer.send(batch(sent, n))
            sent += n
        peer.barrier()
        time.sleep(2.5)
        peer.barrier()
        before = peer.rss_mb()
        started = time.perf_counter()
        while sent < warm + count:
            n = min(10_000, warm + count - sent)
            peer.send(batch(sent, n))
            sent += n
            peer.barrier()
        elapsed = time.perf_counter() - started
        time.sleep(2.5)
        peer.barrier()
        return {"before": before, "after": peer.rss_mb(), "per_second": count / elapsed}
    finally:
        peer.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of the messages")
    args = parser.parse_args()
    count, warm, many = (1_000, 1_000, 10_000) if args.quick else (10_000, 10_000, 100_000)
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as tmp:
        servers = Servers(Path(tmp))
        result = interleaved(servers, count)
        print(json.dumps(result), flush=True)
        bad = memory(servers, "hostile", warm, many)
        good = memory(servers, "valid", warm, many)
    print(json.dumps({"hostile": bad, "valid": good}), flush=True)
    print()
    print("| measure | figure |")
    print("|---|---|")
    print(
        f"| {count:,} hostile frames, each followed by a valid message: valid ones recorded "
        f"| {result['recorded']:,} of {count:,} ({result['duplicates']} twice, "
        f"{result['strays']} not sent), {result['bad_frames']:,} bad frames and "
        f"{result['bad_messages']:,} bad messages counted, {result['errors']} handler errors, "
        f"exit {result['exit_code']}, integrity {result['integrity']} |"
    )
    growth = bad["after"] - bad["before"]
    peer_growth = good["after"] - good["before"]
    print(
        f"| resident memory over {many:,} hostile messages (after {warm:,}) "
        f"| {bad['before']:.1f} -> {bad['after']:.1f} MB ({growth:+.1f} MB); peer, "
        f"{many:,} valid didChange: {good['before']:.1f} -> {good['after']:.1f} MB "
        f"({peer_growth:+.1f} MB) |"
    )
    print(
        f"| messages handled per second | hostile {bad['per_second']:,.0f}/s, valid "
        f"{good['per_second']:,.0f}/s ({bad['per_second'] / good['per_second']:.2f}x) |"
    )


if __name__ == "__main__":
    main()
