"""Sync figures: anonymize and upload 50,000 episodes at the redacted level.

- anonymization alone (project + serialize + content hash, one process), beside its peer
  `json.dumps` of the same episodes (the serialization no upload can avoid), and beside what
  running detect-secrets on every line of every text would cost (measured on a sample);
- loading from the store and anonymizing with the pool of worker processes `capture sync now`
  starts by default, beside the same code in one process;
- end to end: `capture sync now` as a real process, with its default number of anonymizing
  processes and with one (load from the store, anonymize, queue in the
  outbox, gzip, POST in batches, record the answers) to a collector on loopback in its own process
  (the team collector when this tree has it, else the test double); its peer is the same number
  of episodes POSTed as pre-built gzip'd batches with a bare httpx loop to a fresh collector.

Run: python tests/benchmarks/bench_sync.py [--episodes N]

Peer mode, anonymization alone against another version of the code (e.g. the commit before a
change, checked out with `git worktree add ../before <commit>`):

    python tests/benchmarks/bench_sync.py --peer-tree ../before --episodes 10000 --rounds 5

runs the anonymization step of both trees in fresh processes, alternating, on the same synthetic
episodes, and prints each round's episodes per CPU-second and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capture.store.database import Store  # noqa: E402
from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy, content_hash  # noqa: E402
from sync.anonymize.secrets.detect_secrets_engine import DetectSecrets  # noqa: E402
from sync.outbox import Row, body_for  # noqa: E402
from sync.refresh import CHUNK, _projections  # noqa: E402
from sync.settings import OptIn, anonymize_workers  # noqa: E402
from tests.support.sync_support import free_port, real_collector_available  # noqa: E402
from tests.support.synthetic_episodes import make_episode, write_episodes  # noqa: E402

SALT = b"benchmark salt, 32 bytes long..!"
BATCH = 200


def _texts(e: dict) -> list[str]:
    out = [e["prompt"] or ""]
    for p in e["proposals"]:
        out.append(p["file"])
        for h in p["hunks"]:
            out += [h["old_text"], h["new_text"]]
    for r in e["test_runs"]:
        out += [r["command"], *r["failing_ids"]]
    return out


def bench_anonymize(episodes: list[dict]) -> dict[str, float]:
    identity = Identity(usernames=("dev",), hostnames=("devbox",))
    policy = WorkspacePolicy(Level.REDACTED)
    start = time.perf_counter()
    for e in episodes:
        json.dumps(e)
    ref = len(episodes) / (time.perf_counter() - start)
    anonymizer = Anonymizer(SALT, identity)
    # Loading detect-secrets (0.1-0.3 s, once per process) is not part of the rate.
    assert anonymizer.scanner.detect_secrets is not None
    anonymizer.scanner.detect_secrets.load()
    start = time.perf_counter()
    cpu = time.process_time()
    quarantined = 0
    for e in episodes:
        projection = anonymizer.project(e, policy)
        content_hash(projection.serialized or "")
        quarantined += bool(projection.quarantine)
    rate = len(episodes) / (time.perf_counter() - start)
    cpu_rate = len(episodes) / (time.process_time() - cpu)
    ds = anonymizer.scanner.detect_secrets
    assert ds is not None
    # detect-secrets on every line, uncached, on a sample (the whole run would take minutes).
    sample = episodes[:500]
    every_line = DetectSecrets(cache_size=1)
    lines = [ln for e in sample for t in _texts(e) for ln in t.splitlines() if ln.strip()]
    every_line.scan_line("warm up", "")
    start = time.perf_counter()
    for line in lines:
        every_line.scan_line(line + " ", "x.py")
    ds_rate = len(sample) / (time.perf_counter() - start)
    return {
        "anonymize": rate,
        "anonymize_cpu": cpu_rate,
        "json_dumps": ref,
        "detect_secrets_every_line": ds_rate,
        "ds_lines_scanned": ds.lines_scanned,
        "ds_cache_hits": ds.cache_hits,
        "quarantined": quarantined,
    }


def _cpu() -> float:
    """CPU seconds of this process and of its children waited for (worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def bench_load_and_anonymize(episodes: list[dict], tmp: Path, ws: Path) -> dict[str, float]:
    """Load from the store and anonymize, as `capture sync now` does before queueing: in this
    process, and with the pool of worker processes it starts by default (same code, same
    chunks; the pool's start-up is counted)."""
    db = tmp / "pool" / "capture.db"
    with Store.open(db) as store:
        write_episodes(store, episodes, now=time.time())
    identity = Identity(usernames=("dev",), hostnames=("devbox",))
    opt_in = OptIn(str(ws), Level.REDACTED)
    ids = [e["id"] for e in episodes]
    chunks = [[(i, opt_in, "") for i in ids[k : k + CHUNK]] for k in range(0, len(ids), CHUNK)]
    out: dict[str, float] = {}
    for label, workers in (("one", 1), ("pool", anonymize_workers(env={}))):
        with Store.open(db) as store:
            anonymizer = Anonymizer(SALT, identity)
            start, cpu = time.perf_counter(), _cpu()
            done = sum(len(p) for _, p in _projections(store, anonymizer, chunks, workers))
            elapsed, used = time.perf_counter() - start, _cpu() - cpu
        if done != len(episodes):
            raise SystemExit(f"{label}: {done} of {len(episodes)} projected")
        out[label] = len(episodes) / elapsed
        out[f"{label}_cpu"] = len(episodes) / used
    return out


class Collector:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        if real_collector_available():
            self.kind = "team collector (SQLite)"
            db = f"sqlite:///{workdir / 'collector.db'}"
            out = subprocess.run(
                [sys.executable, "-m", "capture", "collector", "token", "create", "--db", db,
                 "--team", "bench", "--scope", "ingest", "--json"],
                env=env, capture_output=True, check=True, text=True,
            )  # fmt: skip
            self.token = json.loads(out.stdout)["token"]
            cmd = [sys.executable, "-m", "capture", "collector", "serve", "--db", db,
                   "--port", str(self.port), "--rate", "100000", "--burst", "100000"]  # fmt: skip
        else:
            self.kind = "collector test double (tests/support/sync_support.py)"
            self.token = "bench-token"
            cmd = [sys.executable, "-m", "tests.support.sync_support", str(self.port), self.token]
        self.proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)  # fmt: skip
        import httpx

        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                httpx.get(f"{self.url}/", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise SystemExit("the collector did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stored(self) -> int:
        if self.kind.startswith("team"):
            from capture.connection import sqlite3

            with sqlite3.connect(self.workdir / "collector.db") as conn:
                return int(conn.execute("SELECT count(*) FROM revisions").fetchone()[0])
        import httpx

        return int(httpx.get(self.url, timeout=10).json()["stored"])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def bench_end_to_end(
    episodes: list[dict], tmp: Path, ws: Path, workers: int | None = None
) -> dict[str, float | str]:
    """`workers`: CAPTURE_SYNC_WORKERS; None leaves it unset (the default)."""
    home = tmp / f"home-{workers}"
    with Store.open(home / "data" / "capture.db") as store:
        write_episodes(store, episodes, now=time.time())
    collector = Collector(tmp / f"collector-{workers}")
    env = dict(os.environ, CAPTURE_HOME=str(home), PYTHONPATH=str(ROOT))
    env.pop("CAPTURE_SYNC_WORKERS", None)
    if workers is not None:
        env["CAPTURE_SYNC_WORKERS"] = str(workers)
    try:
        subprocess.run(
            [sys.executable, "-m", "capture", "sync", "enable", "--url", collector.url,
             "--token", collector.token, "--level", "redacted", "--workspace", str(ws)],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = subprocess.run(
            [sys.executable, "-m", "capture", "sync", "now", "--quiet"],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if result.returncode != 0:
            raise SystemExit(result.stderr)
        stored = collector.stored()
        if stored != len(episodes):
            raise SystemExit(f"the collector stored {stored} of {len(episodes)}")
        with Store.open(home / "data" / "capture.db") as store:
            rows = [
                Row(0, r[0], r[1], r[2], r[3], 0)
                for r in store.conn.execute(
                    "SELECT episode_id, revision, level, payload FROM sync_outbox ORDER BY id"
                )
            ]
    finally:
        collector.stop()
    # Peer: the same episodes, already anonymized and batched, POSTed by a bare httpx loop.
    bodies = [
        gzip.compress(body_for(rows[i : i + BATCH]), compresslevel=3)
        for i in range(0, len(rows), BATCH)
    ]
    peer_collector = Collector(tmp / f"peer-collector-{workers}")
    try:
        import httpx

        headers = {"Content-Encoding": "gzip", "Content-Type": "application/json",
                   "Authorization": f"Bearer {peer_collector.token}",
                   "X-Capture-Contributor": "bench"}  # fmt: skip
        with httpx.Client(timeout=60, trust_env=False) as client:
            start = time.perf_counter()
            for body in bodies:
                client.post(f"{peer_collector.url}/v1/episodes", content=body, headers=headers)
            peer = len(rows) / (time.perf_counter() - start)
    finally:
        peer_collector.stop()
    return {
        "end_to_end": len(episodes) / elapsed,
        "end_to_end_cpu": len(episodes) / cpu,
        "elapsed": elapsed,
        "bare_post": peer,
        "collector": collector.kind,
        "summary": result.stdout.strip(),
    }


# One tree's anonymization step, in a process of its own: the tree's `sync` and test episodes
# are imported, not this one's. Prints episodes per CPU-second and per wall-clock second.
_PEER_CHILD = """
import json, random, sys, time
sys.path.insert(0, sys.argv[1])
from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy, content_hash
from tests.support.synthetic_episodes import make_episode
rng = random.Random(2026)
episodes = [make_episode(rng, i, root="/ws") for i in range(int(sys.argv[2]))]
anonymizer = Anonymizer(SALT, Identity(usernames=("dev",), hostnames=("devbox",)))
anonymizer.scanner.detect_secrets.load()
policy = WorkspacePolicy(Level.REDACTED)
digests = []
start, cpu = time.perf_counter(), time.process_time()
for e in episodes:
    digests.append(content_hash(anonymizer.project(e, policy).serialized or ""))
wall, used = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"cpu": len(episodes) / used, "wall": len(episodes) / wall,
                  "digest": content_hash("".join(digests))}))
""".replace("SALT", repr(SALT))


def bench_peer(peer: Path, episodes: int, rounds: int) -> None:
    """Anonymization alone, this tree against `peer`, alternating in fresh processes."""
    trees = {"this tree": ROOT, "peer": peer.resolve()}
    rates: dict[str, list[float]] = {name: [] for name in trees}
    digests: dict[str, set[str]] = {name: set() for name in trees}
    for r in range(rounds):
        order = list(trees) if r % 2 == 0 else list(trees)[::-1]
        for name in order:
            out = subprocess.run(
                [sys.executable, "-c", _PEER_CHILD, str(trees[name]), str(episodes)],
                capture_output=True, check=True, text=True, cwd=trees[name],
            )  # fmt: skip
            got = json.loads(out.stdout)
            rates[name].append(got["cpu"])
            digests[name].add(got["digest"])
    median = {name: sorted(v)[len(v) // 2] for name, v in rates.items()}
    same = "the same" if digests["this tree"] == digests["peer"] else "different"
    load = os.getloadavg()[0]
    print(
        f"{episodes} synthetic episodes, redacted, {rounds} rounds alternating; load average "
        f"{load:.1f} on {os.cpu_count()} cores; output of both trees: {same}"
    )
    print("\n| tree | episodes per CPU-second, each round | median |")
    print("|---|---|---:|")
    for name in trees:
        each = ", ".join(f"{v:,.0f}" for v in rates[name])
        print(f"| {name} | {each} | {median[name]:,.0f} |")
    print(f"\nratio (this tree / peer, medians): {median['this tree'] / median['peer']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=50_000)
    parser.add_argument("--peer-tree", type=Path, help="anonymization alone, against this tree")
    parser.add_argument("--rounds", type=int, default=5, help="peer mode: rounds per tree")
    args = parser.parse_args()
    if args.peer_tree is not None:
        bench_peer(args.peer_tree, args.episodes, args.rounds)
        return
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ws = tmp / "ws"
        ws.mkdir()
        rng = random.Random(2026)
        episodes = [make_episode(rng, i, root=str(ws)) for i in range(args.episodes)]
        size = sum(len(json.dumps(e)) for e in episodes[:1000]) / 1000
        print(f"{args.episodes} synthetic episodes, {size:.0f} bytes of episode JSON on average")
        a = bench_anonymize(episodes)
        p = bench_load_and_anonymize(episodes, tmp, ws)
        e = bench_end_to_end(episodes, tmp, ws)
        e2 = bench_end_to_end(episodes, tmp, ws, workers=1)
    load = os.getloadavg()[0]
    workers = anonymize_workers(env={})
    print(f"load average {load:.1f} on {os.cpu_count()} cores")
    rows = [
        ("anonymization alone (redacted), one process", a["anonymize"], a["anonymize_cpu"],
         ">= 5,000",
         f"{a['anonymize'] / a['json_dumps']:.2f}x of json.dumps ({a['json_dumps']:,.0f}/s); "
         f"{a['anonymize'] / a['detect_secrets_every_line']:.0f}x detect-secrets on every line "
         f"({a['detect_secrets_every_line']:,.0f}/s)"),
        (f"load from the store + anonymization, {workers} worker processes (the pool `capture "
         "sync now` starts by default)", p["pool"], p["pool_cpu"], "",
         f"{p['pool'] / p['one']:.2f}x of the same in one process ({p['one']:,.0f}/s, "
         f"{p['one_cpu']:,.0f} per CPU-second); CPU counts the worker processes"),
        (f"end to end: `capture sync now` to a collector on loopback (default: {workers} "
         "anonymizing processes)", e["end_to_end"], e["end_to_end_cpu"], ">= 2,000",
         f"{e['end_to_end'] / e['bare_post']:.2f}x of bare httpx POSTs of the same batches "
         f"({e['bare_post']:,.0f}/s); CPU counts the worker processes too"),
        ("end to end, one process (`[sync] workers = 1`)",
         e2["end_to_end"], e2["end_to_end_cpu"], ">= 2,000",
         f"{e2['end_to_end'] / e2['bare_post']:.2f}x of bare httpx POSTs of the same batches "
         f"({e2['bare_post']:,.0f}/s)"),
    ]  # fmt: skip
    print(f"\ncollector: {e['collector']}; `sync now` said: {e['summary']}")
    print(
        f"detect-secrets ran on {a['ds_lines_scanned']:,} lines "
        f"({a['ds_cache_hits']:,} more answered from its cache); "
        f"quarantined: {a['quarantined']}"
    )
    print("\n| figure | episodes/s (wall) | episodes per CPU-second | target | peer, same run |")
    print("|---|---:|---:|---:|---|")
    for name, rate, cpu_rate, target, peer in rows:
        print(f"| {name} | {rate:,.0f} | {cpu_rate:,.0f} | {target} | {peer} |")


if __name__ == "__main__":
    main()
