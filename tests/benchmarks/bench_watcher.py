"""The watcher for terminal agents (`capture watch`): how late it evaluates checkpoints with 1,
100 and 1,000 pending, what the hook pays with a watcher running and when it starts one, and
the watcher's memory and CPU while files do not change.

- Lateness: N proposals in N files (ten per folder), their windows due together; a real
  `capture watch` process evaluates them. Lateness = when the checkpoint row was written minus
  its due time (the row's own `observed_at` is the due time where the recorded changes cover
  it), read by polling the store. Printed against the tolerance after which a checkpoint is
  marked late (2 s).
- The hook: `capture hook claude-code` on an Edit payload, a fresh process per call, with the
  watcher off, with one already running (the common path), and with none running (the hook's
  applier starts one); against `python -c pass` in the same run, interleaved.
- Memory (VmRSS) and CPU (utime + stime over a quiet spell) of a watcher idle and with 1,000
  pending files.

    python tests/benchmarks/bench_watcher.py [--runs N] [--sizes 1,100,1000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capture.config import load_config  # noqa: E402
from capture.connection import sqlite3  # noqa: E402
from capture.model import HunkInput, ProposalInput  # noqa: E402
from capture.recording.recorder import Recorder  # noqa: E402
from capture.store.database import Store  # noqa: E402

OLD = "    return round(subtotal * rate, 2)\n"
NEW = '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n'
BEFORE = f"def tax(subtotal, rate):\n{OLD}"
AFTER = BEFORE.replace(OLD, NEW)


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, CAPTURE_HOME=str(home), PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


def watcher_pid(home: Path) -> int | None:
    import fcntl

    path = home / "state" / "watcher.lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None
    except OSError:
        text = path.read_text().strip()
        return int(text) if text.isdigit() else None
    finally:
        os.close(fd)


def stop_watcher(home: Path) -> None:
    pid = watcher_pid(home)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while watcher_pid(home) is not None and time.monotonic() < deadline:
        time.sleep(0.02)


def start_watcher(home: Path, *args: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "capture", "watch", *args],
        env=env_for(home, CAPTURE_WATCHER="on"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while watcher_pid(home) != proc.pid:
        time.sleep(0.02)
    return proc


def pending_store(home: Path, n: int, due_in: float) -> tuple[Path, float]:
    """N proposals in N files, all due `due_in` seconds after the last is recorded."""
    ws = home.parent / f"ws{n}"
    config = load_config({"CAPTURE_HOME": str(home), "CAPTURE_WINDOWS": "1h"})
    store = Store.open(config.paths.db)
    recorder = Recorder(store, config)
    now = time.time()
    for i in range(n):
        folder = ws / f"pkg{i // 10}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"m{i}.py"
        path.write_text(AFTER)
        edit = ProposalInput(
            str(path), str(ws), "claude-code", [HunkInput(OLD, NEW)], file_text=AFTER
        )
        recorder.proposal(edit, now=now)
    due = time.time() + due_in
    with store.transaction():
        store.conn.execute("UPDATE checkpoints SET due_at = ? WHERE window != 'late'", (due,))
    store.close()
    return config.paths.db, due


def lateness(n: int, tmp: Path) -> tuple[float, float, int]:
    home = tmp / f"late{n}"
    db, _ = pending_store(home, n, due_in=max(5.0, n / 100))
    proc = start_watcher(home)
    conn = sqlite3.connect(db, timeout=30)
    written: dict[int, float] = {}
    try:
        sql = "SELECT count(*) FROM checkpoints WHERE window != 'late'"
        total = conn.execute(sql).fetchone()[0]
        while len(written) < total:
            now = time.time()
            for (cid,) in conn.execute(
                "SELECT id FROM checkpoints WHERE window != 'late' AND observed_at IS NOT NULL"
            ):
                written.setdefault(cid, now)
            time.sleep(0.01)
        dues = dict(conn.execute("SELECT id, due_at FROM checkpoints WHERE window != 'late'"))
        late_marked = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE late_seconds IS NOT NULL"
        ).fetchone()[0]
    finally:
        conn.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    delays = [max(0.0, written[c] - dues[c]) for c in written]
    return statistics.median(delays), max(delays), late_marked


def hook_payload(ws: Path, i: int) -> bytes:
    path = ws / "totals.py"
    return json.dumps(
        {
            "session_id": "bench",
            "cwd": str(ws),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": str(path), "old_string": OLD, "new_string": NEW},
            "tool_response": {"originalFile": BEFORE},
            "tool_use_id": f"toolu_{i}",
        }
    ).encode()


def timed(argv: list[str], env: dict[str, str], stdin: bytes | None, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True, check=True)
    return time.perf_counter() - start


def hook_medians(tmp: Path, runs: int) -> dict[str, float]:
    home = tmp / "hook-home"
    ws = tmp / "hook-ws"
    ws.mkdir()
    (ws / "totals.py").write_text(AFTER)
    hook = [sys.executable, "-m", "capture", "hook", "claude-code"]
    env_on = env_for(home, CAPTURE_WATCHER="on", CAPTURE_WINDOWS="1h")
    env_off = env_for(home, CAPTURE_WATCHER="off", CAPTURE_WINDOWS="1h")
    timed(hook, env_off, hook_payload(ws, 0), ws)  # makes the database
    samples: dict[str, list[float]] = {"python -c pass": [], "off": [], "running": [], "start": []}
    running = start_watcher(home, "--stay")
    try:
        for i in range(runs):
            samples["python -c pass"].append(
                timed([sys.executable, "-c", "pass"], env_off, None, ws)
            )
            samples["off"].append(timed(hook, env_off, hook_payload(ws, 3 * i + 1), ws))
            samples["running"].append(timed(hook, env_on, hook_payload(ws, 3 * i + 2), ws))
    finally:
        running.send_signal(signal.SIGTERM)
        running.wait(timeout=60)
    for i in range(runs):
        stop_watcher(home)
        samples["start"].append(timed(hook, env_on, hook_payload(ws, 10_000 + i), ws))
        deadline = time.monotonic() + 30  # the applier starts one: wait for it, then stop it
        while watcher_pid(home) is None and time.monotonic() < deadline:
            time.sleep(0.02)
    stop_watcher(home)
    return {name: statistics.median(values) for name, values in samples.items()}


def footprint(pid: int, quiet: float) -> tuple[float, float]:
    """(VmRSS in MB, CPU seconds over `quiet` seconds)."""

    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before = cpu()
    time.sleep(quiet)
    used = cpu() - before
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024, used
    return 0.0, used


def status_files(home: Path) -> int:
    try:
        return int(json.loads((home / "state" / "watcher.json").read_text()).get("files", 0))
    except (OSError, ValueError):
        return 0


def resources(tmp: Path, quiet: float) -> dict[str, tuple[float, float]]:
    found = {}
    idle_home = tmp / "idle-home"
    pending_store(idle_home, 0, 3600)
    proc = start_watcher(idle_home, "--stay")
    time.sleep(2)
    found["idle"] = footprint(proc.pid, quiet)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    busy_home = tmp / "busy-home"
    pending_store(busy_home, 1000, 3600)
    proc = start_watcher(busy_home, "--stay")
    while status_files(busy_home) < 1000:
        time.sleep(0.1)
    time.sleep(2)
    found["1,000 pending"] = footprint(proc.pid, quiet)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="1,100,1000")
    parser.add_argument("--quiet", type=float, default=10.0, help="seconds of CPU sampling")
    args = parser.parse_args()
    # a hook's detached applier may still be writing its log when the run ends
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as name:
        tmp = Path(name)
        print("checkpoint lateness (written - due), a real watcher:")
        for n in (int(s) for s in args.sizes.split(",")):
            median, worst, marked = lateness(n, tmp)
            print(
                f"  {n:>5} pending: median {median * 1000:7.0f} ms, max {worst * 1000:7.0f} ms "
                f"({worst / 2.0:.2f}x the 2 s tolerance), marked late: {marked}"
            )
        medians = hook_medians(tmp, args.runs)
        floor = medians["python -c pass"]
        print(f"hook median over {args.runs} runs (ratio to python -c pass):")
        for name, value in medians.items():
            print(f"  {name:<16} {value * 1000:7.1f} ms  {value / floor:5.2f}x")
        print(f"watcher footprint (CPU over {args.quiet:g} s with no file changing):")
        for name, (rss, cpu) in resources(tmp, args.quiet).items():
            print(f"  {name:<14} {rss:6.1f} MB  CPU {cpu:.3f} s")


if __name__ == "__main__":
    main()
