"""What `capture run -- true` adds to `true`: a fresh `python -m capture run` process per
call, which starts `true` through its output channels, waits for it, looks at the report paths,
queues the run (one INSERT) and returns; a detached process records it (one write transaction,
the run linked to the open episodes of the workspace). The script checks that every run was
recorded once the queue emptied, and measures what recording a queued run costs, in-process.

The database already holds `--history` earlier runs and `--episodes` open episodes of the
workspace, so linking has something to look at. Peers, measured in the same run and interleaved
with the wrapped calls: `true` itself (the budget is +80 ms over it), and the same interpreter
running `-c pass`, and the same interpreter importing the stdlib modules the wrapper needs (the
floor any Python wrapper of this design pays).

    python tests/benchmarks/bench_run.py [--runs N] [--history N] [--episodes N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capture.connection import sqlite3 as library  # noqa: E402

BUDGET_MS = 80.0

#: what any Python wrapper of this design pays at the least: the interpreter and the stdlib
#: modules the runner and the queue use, and this process's DB-API module
FLOOR = f"import json, pathlib, re, select, signal, {library.__name__}"


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{cmd} failed: {proc.returncode} {proc.stderr!r}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def seed(home: Path, ws: Path, episodes: int, history: int) -> None:
    """Open episodes (one applied proposal each) and earlier runs in the workspace."""
    os.environ["CAPTURE_HOME"] = str(home)
    os.environ["CAPTURE_WINDOWS"] = "10m"
    from capture.config import load_config
    from capture.model import HunkInput, ProposalInput, TestRunInput
    from capture.recording.recorder import record_proposal, record_test_run
    from capture.store.database import Store

    config = load_config()
    now = time.time()
    with Store.open(config.paths.db) as store:
        for i in range(episodes):
            path = ws / f"mod{i}.py"
            path.write_text(f"def f{i}():\n    return {i}\n")
            proposal = ProposalInput(
                path=str(path),
                workspace=str(ws),
                agent="claude-code",
                hunks=[HunkInput("", f"    return {i}\n")],
                session_id="s",
                turn_id=f"t{i}",
            )
            record_proposal(store, config, proposal, now=now - 300 + i)
        for i in range(history):
            run = TestRunInput(
                command="pytest -q",
                source="wrapper",
                started_at=now - 200 + i * 0.1,
                workspace=str(ws),
                duration_s=1.0,
                exit_code=i % 2,
                passed=10,
                failed=i % 2,
                errors=0,
                skipped=0,
            )
            record_test_run(store, run, now=run.started_at + 1)


def check_recorded(home: Path, ws: Path, expected: int) -> tuple[int, float]:
    """Wait for the queue to empty; the number of wrapper runs recorded (all of them, or the
    script fails), and the CPU milliseconds recording one queued run takes."""
    from capture.config import load_config
    from capture.connection import sqlite3
    from capture.hooks.inbox import enqueue
    from capture.hooks.queue import drain
    from capture.store.database import Store
    from capture.testruns.sources.handoff import RUN_AGENT, RUN_EVENT, encode_run

    db = home / "data" / "capture.db"
    deadline = time.monotonic() + 60
    while True:
        conn = sqlite3.connect(db, timeout=30)
        try:
            left = conn.execute("SELECT count(*) FROM hook_inbox").fetchone()[0]
            runs = conn.execute(
                "SELECT count(*) FROM test_runs WHERE source = 'wrapper'"
            ).fetchone()[0]
        finally:
            conn.close()
        if left == 0:
            break
        assert time.monotonic() < deadline, f"{left} runs still queued after 60 s"
        time.sleep(0.1)
    assert runs == expected, f"{runs} wrapper runs recorded, {expected} expected"

    os.environ["CAPTURE_HOME"] = str(home)
    os.environ["CAPTURE_WINDOWS"] = "10m"
    config = load_config()
    count = 40
    for _ in range(count):
        now = time.time()
        raw = encode_run(
            argv=["true"], name=None, cwd=str(ws), workspace=str(ws), started_at=now,
            duration_s=0.002, exit_code=0, output=b"",
        )  # fmt: skip
        assert enqueue(str(db), RUN_AGENT, RUN_EVENT, raw, str(ws), "")
    with Store.open(db) as store:
        start = time.process_time()
        assert drain(store, config) == count
        apply_ms = (time.process_time() - start) * 1000 / count
    return runs, apply_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--history", type=int, default=300)
    parser.add_argument("--episodes", type=int, default=20)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-run-"))
    try:
        ws = tmp / "project"
        ws.mkdir()
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        home = tmp / "home"
        seed(home, ws, args.episodes, args.history)
        # as installed: bytecode compiled once (pip does this at install time)
        compileall.compile_dir(ROOT / "capture", quiet=1)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(CAPTURE_HOME=str(home), CAPTURE_WINDOWS="10m", PYTHONPATH=str(ROOT))
        true = shutil.which("true") or "/bin/true"
        peers = {
            "`true`": [true],
            "`python -c pass`": [sys.executable, "-c", "pass"],
            "stdlib floor": [sys.executable, "-c", FLOOR],
            "`capture run -- true`": [sys.executable, "-m", "capture", "run", "--", true],
        }
        for cmd in peers.values():  # warm caches (and the schema) before measuring
            timed(cmd, env, ws)
        walls: dict[str, list[float]] = {name: [] for name in peers}
        cpus: dict[str, list[float]] = {name: [] for name in peers}
        for _ in range(args.runs):
            for name, cmd in peers.items():
                wall, cpu = timed(cmd, env, ws)
                walls[name].append(wall * 1000)
                cpus[name].append(cpu * 1000)
        med = {name: statistics.median(v) for name, v in walls.items()}
        cpu_med = {name: statistics.median(v) for name, v in cpus.items()}
        base = med["`true`"]
        print(
            f"\n{args.runs} interleaved runs each; {args.history} earlier runs and "
            f"{args.episodes} open episodes in the workspace; Python "
            f"{sys.version.split()[0]}, {os.cpu_count()} CPUs, load "
            f"{os.getloadavg()[0]:.1f}\n"
        )
        print("| command | median wall (ms) | median CPU (ms) | added to `true` (ms) |")
        print("|---|---:|---:|---:|")
        for name in peers:
            added = "" if name == "`true`" else f"{med[name] - base:.1f}"
            print(f"| {name} | {med[name]:.1f} | {cpu_med[name]:.1f} | {added} |")
        recorded, apply_ms = check_recorded(home, ws, args.history + 1 + args.runs)
        added = med["`capture run -- true`"] - base
        print(
            f"\nall {recorded} wrapped runs recorded once the queue emptied; recording one "
            f"queued run (in the background): {apply_ms:.1f} ms CPU"
        )
        verdict = "within" if added <= BUDGET_MS else "OVER"
        print(
            f"\n`capture run` adds {added:.1f} ms to `true` (budget {BUDGET_MS:.0f} ms: "
            f"{verdict}); {med['`capture run -- true`'] / med['`python -c pass`']:.2f}x "
            f"a bare interpreter start."
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
