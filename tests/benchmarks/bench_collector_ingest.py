"""Collector ingest: 4 concurrent clients on loopback, into PostgreSQL and into SQLite.

Each client process gzips its batches before the clock starts, then posts them one after the
other (as the uploader does) and checks that every episode came back `accepted`. The server is a
real `capture collector serve` process; PostgreSQL is a throwaway cluster with its default
durability (fsync on). The peer, measured in the same run: the same rows written straight through
the storage backend in-process (no HTTP, no gzip, no JSON, no validation) — what the database
alone costs.

    python tests/benchmarks/bench_collector_ingest.py [--episodes 40000] [--batch 500]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.collector_support import (  # noqa: E402
    Collector,
    PgCluster,
    batch_body,
    item,
    make_episode,
    make_token,
    upload_headers,
)

CLIENTS = 4
TARGETS = {"postgresql": 5000, "sqlite": 3000}
_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def server_pids(collector_pgid: int, postmaster: int | None) -> list[int]:
    """The collector's processes (its process group) and PostgreSQL's (postmaster and its
    children): whose CPU time an episode costs on the server side."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None:
            continue
        ppid, pgrp = int(fields[1]), int(fields[2])
        pid = int(entry.name)
        if pgrp == collector_pgid or (postmaster and (pid == postmaster or ppid == postmaster)):
            pids.append(pid)
    return pids


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = _stat(pid)
        if fields:
            total += int(fields[11]) + int(fields[12])  # utime + stime
    return total / _TICK


def episodes_for(client: int, count: int, level: str) -> list[dict]:
    return [
        item(make_episode(f"c{client}e{i:06d}", level=level), level=level) for i in range(count)
    ]


def client_main(
    url: str, token: str, client: int, count: int, batch: int, level: str, ready, go, out
) -> None:
    import httpx

    items = episodes_for(client, count, level)
    bodies = [batch_body(items[i : i + batch]) for i in range(0, len(items), batch)]
    headers = upload_headers(token, contributor=f"bench{client}")
    with httpx.Client(timeout=120) as http:
        http.get(f"{url}/v1/health")
        ready.wait()
        go.wait()
        accepted = 0
        for body in bodies:
            r = http.post(f"{url}/v1/episodes", content=body, headers=headers)
            r.raise_for_status()
            accepted += sum(1 for x in r.json()["results"] if x["status"] == "accepted")
    out.put((client, accepted, time.perf_counter()))


def run_clients(
    url: str, token: str, per_client: int, batch: int, level: str, pids: Any
) -> tuple[float, float]:
    """(wall seconds, server CPU seconds) of the upload."""
    ctx = mp.get_context("fork")
    ready = ctx.Barrier(CLIENTS + 1)
    go = ctx.Event()
    out = ctx.Queue()
    procs = [
        ctx.Process(
            target=client_main,
            args=(url, token, c, per_client, batch, level, ready, go, out),
        )
        for c in range(CLIENTS)
    ]
    for p in procs:
        p.start()
    ready.wait()
    watched = pids()
    cpu_start = cpu_seconds(watched)
    start = time.perf_counter()
    go.set()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    end = max(r[2] for r in results)
    cpu = cpu_seconds(watched) - cpu_start
    accepted = sum(r[1] for r in results)
    if accepted != per_client * CLIENTS:
        raise SystemExit(f"only {accepted} of {per_client * CLIENTS} episodes were accepted")
    return end - start, cpu


def direct_store(db: str, per_client: int, batch: int, level: str) -> float:
    """The peer: the same rows through the storage backend, no HTTP, one writer."""
    from sync.collector.ingest import EpisodeRow, prepare
    from sync.collector.storage import open_storage

    storage = open_storage(db)
    storage.migrate()
    rows: list[EpisodeRow] = []
    for c in range(CLIENTS):
        for it in episodes_for(c + 10, per_client, level):
            row = prepare(it, contributor=f"bench{c}", received_at=time.time())
            assert isinstance(row, EpisodeRow)
            rows.append(row)
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        storage.store("peer", rows[i : i + batch])
    elapsed = time.perf_counter() - start
    storage.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=40_000, help="in all, over 4 clients")
    parser.add_argument("--batch", type=int, default=500, help="episodes per request")
    parser.add_argument("--level", default="redacted", choices=("metrics", "redacted", "full"))
    parser.add_argument("--workers", type=int, default=2, help="collector worker processes")
    args = parser.parse_args()
    per_client = args.episodes // CLIENTS
    total = per_client * CLIENTS
    tmp = Path(tempfile.mkdtemp(prefix="bench-collector-"))
    cluster = PgCluster(durable=True).start()
    rows = []
    try:
        dbs = {
            "postgresql": (cluster.create_database("ingest"), cluster.create_database("peer")),
            "sqlite": (f"sqlite:///{tmp / 'ingest.db'}", f"sqlite:///{tmp / 'peer.db'}"),
        }
        for backend, (db, peer_db) in dbs.items():
            token = make_token(db, "bench", "ingest")
            collector = Collector(
                db,
                tmp / "home",
                ("--workers", str(args.workers), "--rate", "100000", "--burst", "100000"),
            ).start()
            postmaster = cluster.postmaster_pid() if backend == "postgresql" else None
            try:
                elapsed, cpu = run_clients(
                    collector.url,
                    token,
                    per_client,
                    args.batch,
                    args.level,
                    lambda c=collector, p=postmaster: server_pids(c.proc.pid, p),
                )
            finally:
                collector.stop()
            peer = direct_store(peer_db, per_client, args.batch, args.level)
            rate, peer_rate = total / elapsed, total / peer
            cpu_us = cpu / total * 1e6
            rows.append((backend, rate, peer_rate, TARGETS[backend], cpu_us))
            print(
                f"{backend}: {total} episodes in {elapsed:.2f} s over HTTP = {rate:,.0f}/s; "
                f"direct storage writes {peer_rate:,.0f}/s; HTTP/direct = {rate / peer_rate:.2f}; "
                f"server CPU {cpu_us:.0f} us/episode (collector + database)",
                flush=True,
            )
    finally:
        cluster.stop()
    print()
    print(
        f"Ingest, {CLIENTS} concurrent clients on loopback, {total:,} {args.level} episodes in "
        f"batches of {args.batch}, collector with {args.workers} worker(s):"
    )
    print()
    print(
        "| database | episodes/s over HTTP | target | direct storage writes/s (peer) | ratio "
        "| server CPU per episode | episodes/s per idle core |"
    )
    print("|---|---|---|---|---|---|---|")
    for backend, rate, peer_rate, target, cpu_us in rows:
        verdict = "met" if rate >= target else "NOT met"
        print(
            f"| {backend} | {rate:,.0f} | >= {target:,} ({verdict}) | {peer_rate:,.0f} | "
            f"{rate / peer_rate:.2f} | {cpu_us:.0f} us | {1e6 / cpu_us:,.0f} |"
        )
    print()
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
