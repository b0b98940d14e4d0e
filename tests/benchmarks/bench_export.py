"""How fast `capture export` writes 100,000 episodes, and that its memory stays flat.

Builds a store of N synthetic episodes (1-3 proposals of 1-2 hunks each, as
tests/support/synthetic_episodes.py makes them), with a current tier for every proposal and episode
written by `record_tier`. Then, each in a fresh child process so that peak memory is its own:

- export: the real pipeline (`stream_episodes` page by page, `run_export` at the full level) into
  `sft,dpo,kto,episodes`;
- peer: the same episodes read the same way (`load_episodes` page by page, without what the
  export adds) and each written with `json.dumps`, the least any JSONL export of these rows does.

Episodes/s for both, their ratio, and the child's peak RSS. The export is run again over the
newest 10% of the store: a streamed export's peak memory is the same for 10% and for 100%.

    python tests/benchmarks/bench_export.py [--episodes N] [--fresh]
"""

from __future__ import annotations

import argparse
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

T0 = 1_780_000_000.0  # make_episode's first start; episode n starts n minutes later


def build(path: Path, n: int) -> None:
    from capture.store.database import Store
    from capture.store.tier_rows import record_tier
    from capture.tiers import Tier, TierDecision
    from tests.support.synthetic_episodes import make_episode, write_episodes

    rng = random.Random(18)
    tiers = list(Tier)
    store = Store.open(path)
    for start in range(0, n, 5000):
        batch = [make_episode(rng, i) for i in range(start, min(n, start + 5000))]
        write_episodes(store, batch, now=T0)
        with store.transaction() as conn:
            for e in batch:
                for p in e["proposals"]:
                    tier = tiers[rng.randrange(len(tiers) - 1)]  # every tier but quarantine
                    record_tier(conn, "proposal", p["id"], TierDecision(tier, ("bench",), 1), T0)
                record_tier(conn, "episode", e["id"], TierDecision(Tier.SILVER, ("bench",), 1), T0)
        print(f"  built {min(n, start + 5000)}/{n}", file=sys.stderr, end="\r")
    store.close()
    print(file=sys.stderr)


def child(mode: str, db: Path, since: float | None, out: Path) -> None:
    from capture.store.database import Store

    store = Store.open(db)
    t = time.perf_counter()
    if mode == "export":
        from capture.export.formats import parse_formats
        from capture.export.selection import Selection, stream_episodes
        from capture.export.writer import ExportPlan, run_export

        plan = ExportPlan(formats=parse_formats("sft,dpo,kto,episodes"), out_dir=out)
        result = run_export(
            stream_episodes(store, Selection(since=since)), plan, lambda e: (e, None)
        )
        count = result.datasheet["episodes"]
    else:
        from capture.store.episodes import load_episodes

        params = [since] if since is not None else []
        count = 0
        out.mkdir(parents=True, exist_ok=True)
        with (out / "plain.jsonl").open("w") as f:
            after: tuple[float, str] = (-1.0, "")
            while True:
                keyset = "last_at >= ? AND" if since is not None else ""
                rows = store.conn.execute(
                    f"SELECT id, started_at FROM episodes WHERE {keyset} "
                    "(started_at > ? OR (started_at = ? AND id > ?)) "
                    "ORDER BY started_at, id LIMIT 500",
                    [*params, after[0], after[0], after[1]],
                ).fetchall()
                if not rows:
                    break
                after = (rows[-1][1], rows[-1][0])
                for e in load_episodes(store, ids=[r[0] for r in rows])[::-1]:
                    f.write(json.dumps(e) + "\n")
                    count += 1
    seconds = time.perf_counter() - t
    peak_mb = _peak_rss_mb()
    print(json.dumps({"episodes": count, "seconds": seconds, "peak_mb": peak_mb}))


def _peak_rss_mb() -> float:
    """This process's own peak RSS (VmHWM): `ru_maxrss` would include the parent's, which a
    child inherits across fork and exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(mode: str, db: Path, since: float | None, out: Path) -> dict[str, float]:
    args = [sys.executable, __file__, "--child", mode, "--db", str(db), "--out", str(out)]
    if since is not None:
        args += ["--since", str(since)]
    proc = subprocess.run(args, capture_output=True, text=True, check=True, cwd=ROOT)
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--child")
    parser.add_argument("--db")
    parser.add_argument("--out")
    parser.add_argument("--since", type=float)
    args = parser.parse_args()
    if args.child:
        child(args.child, Path(args.db), args.since, Path(args.out))
        return
    base = Path(tempfile.gettempdir()) / "capture-bench-export"
    base.mkdir(exist_ok=True)
    db = base / f"export-{args.episodes}.db"
    if args.fresh or not db.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        print(f"building a store of {args.episodes} episodes ...", file=sys.stderr)
        build(db, args.episodes)
    tenth = T0 + int(args.episodes * 0.9) * 60
    results = {}
    for name, mode, since in (
        ("export, all", "export", None),
        ("json.dumps, all", "plain", None),
        ("export, newest 10%", "export", tenth),
        ("json.dumps, newest 10%", "plain", tenth),
    ):
        results[name] = run_child(mode, db, since, base / name.replace(" ", "_"))
    print(f"\nload average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs\n")
    print("| run | episodes | seconds | episodes/s | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|")
    for name, r in results.items():
        rate = r["episodes"] / r["seconds"]
        print(
            f"| {name} | {r['episodes']:,.0f} | {r['seconds']:.1f} | {rate:,.0f} "
            f"| {r['peak_mb']:.0f} |"
        )
    full, plain = results["export, all"], results["json.dumps, all"]
    print(
        f"\nexport / json.dumps time: {full['seconds'] / plain['seconds']:.2f}x; "
        f"export peak RSS, all / newest 10%: "
        f"{full['peak_mb'] / results['export, newest 10%']['peak_mb']:.2f}x"
    )


if __name__ == "__main__":
    main()
