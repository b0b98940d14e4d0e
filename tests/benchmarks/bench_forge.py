"""Forge webhooks at the collector: signed deliveries over HTTP into PostgreSQL and SQLite,
against episode uploads into the same collector in the same run; and linking a team's
deliveries to its episodes.

Ingest: 4 client processes post signed GitHub deliveries (one per request, as GitHub sends
them) to a real `capture collector serve`; the peer, in the same run and the same collector, is
the episode upload of the same clients (gzip'd batches of 500, as `capture sync` sends them).
A third phase gives the cost of a request alone: as many `GET /v1/health` (one database
ping each) as deliveries. Linking: `build_index` over the deliveries of `--prs` pull requests
(push, opened, review, push, synchronize, CI, merge: 10,000 deliveries by default) and the
verdict for each of
`--episodes` episodes (100,000 by default, one in ten held by a pull request); the peer is
parsing those episodes' JSON, which the export does anyway.

    python tests/benchmarks/bench_forge.py [--deliveries 8000] [--prs 1430] [--episodes 100000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

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
from tests.support.forge_support import example, make_secret, signature  # noqa: E402

CLIENTS = 4


def _deliveries(client: int, count: int) -> list[tuple[str, str, bytes]]:
    base = example("github/pull_request.opened")
    out = []
    for i in range(count):
        payload = dict(base, number=i, after=f"{client:02d}{i:038x}")
        out.append(("pull_request", f"c{client}-{i}", json.dumps(payload).encode()))
    return out


def client_main(url: str, team: str, secret: str, token: str, client: int, n: int,
                ready: Any, go: Any, out: Any) -> None:  # fmt: skip
    import httpx

    deliveries = _deliveries(client, n)
    signed = [(e, d, b, signature(secret, b)) for e, d, b in deliveries]
    items = [item(make_episode(f"c{client}e{i:06d}")) for i in range(n)]
    bodies = [batch_body(items[i : i + 500]) for i in range(0, len(items), 500)]
    headers = upload_headers(token, contributor=f"bench{client}")
    with httpx.Client(timeout=120) as http:
        http.get(f"{url}/v1/health")
        ready.wait()
        go.wait()
        start = time.perf_counter()
        for event, delivery, body, sig in signed:
            r = http.post(
                f"{url}/webhooks/github",
                params={"team": team},
                content=body,
                headers={"X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
                         "X-Hub-Signature-256": sig, "Content-Type": "application/json"},
            )  # fmt: skip
            assert r.status_code == 200 and r.json()["status"] == "stored", r.text
        middle = time.perf_counter()
        for body in bodies:
            r = http.post(f"{url}/v1/episodes", content=body, headers=headers)
            r.raise_for_status()
        end = time.perf_counter()
        for _ in range(n):
            http.get(f"{url}/v1/health").raise_for_status()
        health = time.perf_counter()
    out.put((middle - start, end - middle, health - end))


def ingest(db: str, home: Path, n: int) -> tuple[float, float, float]:
    """(deliveries/s, episodes/s, health checks/s) over 4 clients; each client posts its
    deliveries, then its episodes, then as many health checks (one database ping each) as
    deliveries: the cost of a request alone. Each phase's slowest client sets its time."""
    secret = make_secret(db, "bench")
    token = make_token(db, "bench", "ingest")
    collector = Collector(db, home, ("--workers", "2", "--rate", "1e6", "--burst", "1000000"))
    collector.start()
    ctx = mp.get_context("fork")
    ready, go, out = ctx.Barrier(CLIENTS + 1), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=client_main,
                    args=(collector.url, "bench", secret, token, c, n, ready, go, out))
        for c in range(CLIENTS)
    ]  # fmt: skip
    try:
        for p in procs:
            p.start()
        ready.wait()
        go.set()
        results = [out.get(timeout=900) for _ in procs]
        for p in procs:
            p.join()
    finally:
        collector.stop()
    total = n * CLIENTS
    return tuple(total / max(r[i] for r in results) for i in range(3))  # type: ignore[return-value]


def linking(prs: int, episodes: int) -> tuple[int, float, float, float]:
    from sync.collector.forge import Delivery
    from sync.collector.forge_export import with_forge
    from sync.collector.forge_link import build_index

    deliveries: list[Delivery] = []
    t = 0.0

    def add(facts: dict[str, Any]) -> None:
        nonlocal t
        t += 1.0
        deliveries.append(Delivery("github", f"d{len(deliveries)}", "x", t,
                                   {"repo": "acme/app", **facts}))  # fmt: skip

    for n in range(prs):
        c1, c2 = f"{n:040x}", f"{n + 10**9:040x}"
        ref = f"b{n}"
        add({"kind": "push", "ref": f"refs/heads/{ref}", "after": c1,
             "commits": [{"sha": c1, "files": ["src/a.py", "src/b.py"]}]})  # fmt: skip
        add({"kind": "pr", "number": n, "action": "opened", "head_sha": c1, "head_ref": ref,
             "additions": 120, "deletions": 3})  # fmt: skip
        add({"kind": "review", "number": n, "state": "changes_requested", "commit": c1})
        add({"kind": "push", "ref": f"refs/heads/{ref}", "after": c2,
             "commits": [{"sha": c2, "files": ["src/b.py"]}]})  # fmt: skip
        add({"kind": "pr", "number": n, "action": "synchronize", "head_sha": c2, "head_ref": ref})
        add({"kind": "ci", "head_sha": c2, "name": "tests", "conclusion": "success"})
        add({"kind": "pr", "number": n, "action": "closed", "head_sha": c2, "head_ref": ref,
             "merged": True})  # fmt: skip
    bodies = []
    for i in range(episodes):
        commit = f"{i // 10:040x}" if i % 10 == 0 else f"{i + 10**12:040x}"
        proposals = [
            {"file": name, "late_signals": {"commit": commit, "committed_lines": lines}}
            for name, lines in (("src/a.py", 4), ("src/b.py", 3))
        ]
        tier = {"tier": "gold", "reasons": [], "rules_version": 1}
        episode = {"id": f"e{i}", "level": "redacted", "proposals": proposals, "tier": tier}
        bodies.append(orjson.dumps(episode))
    start = time.perf_counter()
    parsed = [orjson.loads(b) for b in bodies]
    peer = time.perf_counter() - start
    start = time.perf_counter()
    index = build_index(deliveries)
    indexed = time.perf_counter() - start
    start = time.perf_counter()
    linked = sum(1 for e in with_forge(parsed, index) if "forge" in e)
    verdicts = time.perf_counter() - start
    return len(deliveries), indexed, verdicts, peer if linked else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deliveries", type=int, default=8000, help="in all, over 4 clients")
    parser.add_argument("--prs", type=int, default=1430, help="pull requests (7 deliveries each)")
    parser.add_argument("--episodes", type=int, default=100_000)
    args = parser.parse_args()
    n = args.deliveries // CLIENTS
    tmp = Path(tempfile.mkdtemp(prefix="bench-forge-"))
    cluster = PgCluster(durable=True).start()
    try:
        for backend, db in (
            ("postgresql", cluster.create_database("forge")),
            ("sqlite", f"sqlite:///{tmp / 'forge.db'}"),
        ):
            deliveries, episodes, health = ingest(db, tmp / "home", n)
            print(f"{backend}: webhook deliveries {deliveries:,.0f}/s (one per request); episode "
                  f"uploads {episodes:,.0f}/s (batches of 500); deliveries/episodes "
                  f"{deliveries / episodes:.2f}; health checks {health:,.0f}/s; "
                  f"deliveries/health checks {deliveries / health:.2f}", flush=True)  # fmt: skip
    finally:
        cluster.stop()
    count, indexed, verdicts, peer = linking(args.prs, args.episodes)
    print(f"linking: index of {count:,} deliveries {indexed:.3f} s; verdicts for "
          f"{args.episodes:,} episodes {verdicts:.3f} s; peer (parsing those episodes' JSON) "
          f"{peer:.3f} s; (index + verdicts)/peer = {(indexed + verdicts) / peer:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
