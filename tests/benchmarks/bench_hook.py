"""How long `capture hook claude-code` takes on a PostToolUse Edit payload, as Claude Code runs
it: a fresh `python -m capture hook claude-code` process per tool call, the payload on stdin.

Each call records a new proposal (a new tool_use_id each time, so nothing is deduplicated away):
read stdin, parse, read the edited file, locate the hunk, one write transaction, then the due
checkpoints of the workspace. The database already holds `--history` earlier proposals of that
workspace, a share of them with checkpoints due, so every call also observes some.

Peers, measured in the same run and interleaved with the hook calls: the same interpreter
running `-c pass` (the floor any Python hook pays), and `python3 -c pass` as found on PATH.

    python tests/benchmarks/bench_hook.py [--runs N] [--history N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from capture.connection import sqlite3

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (
    ROOT / "tests" / "fixtures" / "agent-formats" / "examples" / "claude_code_posttooluse_edit.json"
)
BEFORE = "from decimal import Decimal, ROUND_HALF_UP\n\n\ndef tax(subtotal, rate):\n"
AFTER_LINE = '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n'


#: what recording a proposal needs at the least: the stdlib modules the core's store and model
#: use, and rapidfuzz for counting a change
#: What queueing needs: os and this process's DB-API module (the bundled library's, if any).
FLOOR = f"import os, {sqlite3.__name__}"


def timed(
    cmd: list[str], data: bytes | None, env: dict[str, str], cwd: Path
) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        cmd, input=data, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--history", type=int, default=200)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    try:
        ws = tmp / "invoicer"
        (ws / "invoicer").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        # as installed: bytecode compiled once (pip does this at install time)
        compileall.compile_dir(ROOT / "capture", quiet=1)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for name in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
            env.pop(name, None)
        env.update(
            CAPTURE_HOME=str(tmp / "home"),
            PYTHONPATH=str(ROOT),
            # short windows: during the run earlier proposals fall due and are observed
            CAPTURE_WINDOWS="1s,5s,30s",
        )
        template = json.loads(EXAMPLE.read_text().replace("/home/dana/src/invoicer", str(ws)))
        hook = [sys.executable, "-m", "capture", "hook", "claude-code"]

        def payload(i: int, name: str = "totals.py") -> bytes:
            body = json.loads(json.dumps(template))
            path = str(ws / "invoicer" / name)
            body["tool_use_id"] = f"toolu_bench_{name}_{i:06d}"
            body["tool_input"]["file_path"] = body["tool_response"]["filePath"] = path
            return json.dumps(body).encode()

        # history: files the agent edited earlier in this workspace, tracked by checkpoints
        for i in range(args.history):
            name = f"mod{i % 50}.py"
            (ws / "invoicer" / name).write_text(BEFORE + AFTER_LINE + f"# {i}\n")
            timed(hook, payload(i, name), env, ws)
        (ws / "invoicer" / "totals.py").write_text(BEFORE + AFTER_LINE)

        pass_same = [sys.executable, "-c", "pass"]
        python3 = shutil.which("python3") or sys.executable
        pass_path = [python3, "-c", "pass"]
        floor = [sys.executable, "-c", FLOOR]
        keys = ("hook", "floor", "same", "path")
        times: dict[str, list[float]] = {k: [] for k in keys}
        cpu: dict[str, list[float]] = {k: [] for k in keys}
        for i in range(args.runs):
            for key, cmd, data in (
                ("same", pass_same, None),
                ("hook", hook, payload(i)),
                ("floor", floor, None),
                ("path", pass_path, None),
            ):
                wall, used = timed(cmd, data, env, ws)
                times[key].append(wall)
                cpu[key].append(used)

        # The agent is released once the payload is queued; a detached child applies it.
        # Every payload must have become a proposal by the time the queue is empty.
        db = tmp / "home" / "data" / "capture.db"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            conn = sqlite3.connect(db, timeout=30)
            left = conn.execute("SELECT count(*) FROM hook_inbox").fetchone()[0]
            applied = conn.execute("SELECT count(*) FROM proposals").fetchone()[0]
            conn.close()
            if not left:
                break
            time.sleep(0.1)
        log = tmp / "home" / "state" / "log" / "hooks.log"
        problems = log.read_text().splitlines() if log.exists() else []
        median = {k: statistics.median(v) * 1000 for k, v in times.items()}
        p90 = {k: statistics.quantiles(v, n=10)[-1] * 1000 for k, v in times.items()}
        cpu_median = {k: statistics.median(v) * 1000 for k, v in cpu.items()}
        rows = [
            ("`capture hook claude-code` (PostToolUse Edit)", "hook"),
            (f'`python -c "{FLOOR}"` (what queueing needs)', "floor"),
            (f"`{Path(sys.executable).name} -c pass` (same interpreter)", "same"),
            ("`python3 -c pass` (first on `PATH`)", "path"),
        ]
        load = os.getloadavg()[0]
        print(
            f"{args.runs} runs each, interleaved; {args.history} earlier proposals in the db; "
            f"{os.cpu_count()} CPUs, load average {load:.1f}"
        )
        print("| command | median wall ms | p90 wall ms | median CPU ms | hook / this (wall) |")
        print("|---|---:|---:|---:|---:|")
        for label, key in rows:
            ratio = median["hook"] / median[key]
            print(
                f"| {label} | {median[key]:.1f} | {p90[key]:.1f} | {cpu_median[key]:.1f} "
                f"| {ratio:.2f}x |"
            )
        budget_ok = median["hook"] <= 60 and median["hook"] <= 3 * median["same"]
        print(
            f"budget (median <= 60 ms and <= 3x the same interpreter's `-c pass`): "
            f"{'met' if budget_ok else 'NOT met'}"
        )
        print(
            f"applied in the background: {applied} proposals for "
            f"{args.runs + args.history} payloads, queue {'empty' if not left else 'NOT empty'}"
        )
        if problems:
            print(f"hooks.log: {len(problems)} line(s), last: {problems[-1]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
