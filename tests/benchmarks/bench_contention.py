"""Hook payloads and test runs under write contention: 8 writers sending `capture hook
claude-code` Edit payloads as fast as they can (a fresh process per call, each with its own
tool_use_id), every fourth call of each writer a `capture run` of a one-line command instead;
then every payload sent must be a proposal, and every run a test run, once the queue is
drained; none may be lost.

Peer, measured in the same run: one writer alone for as long, in a store of its own. Printed:
payloads sent and recorded, lost, "database is locked" lines (the hooks' output and the hook
log), and the payloads per second, as a ratio against the single writer.

    python tests/benchmarks/bench_contention.py [--seconds 60] [--writers 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from capture.connection import sqlite3

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (
    ROOT / "tests" / "fixtures" / "agent-formats" / "examples" / "claude_code_posttooluse_edit.json"
)
EXAMPLE_ROOT = "/home/dana/src/invoicer"
AFTER = (
    "from decimal import Decimal, ROUND_HALF_UP\n\n\ndef tax(subtotal, rate):\n"
    '    return (subtotal * rate).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n'
)


class Phase:
    def __init__(self, writers: int, seconds: float, base: Path) -> None:
        self.writers = writers
        self.seconds = seconds
        self.home = base / f"home-{writers}"
        self.ws = base / f"ws-{writers}"
        self.sent = 0
        self.runs = 0
        self.locked_output = 0
        self.failed_calls = 0
        self.elapsed = 0.0
        self.lock = threading.Lock()

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["CAPTURE_HOME"] = str(self.home)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        for name in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
            env.pop(name, None)
        return env

    def payload(self, tool_use_id: str) -> bytes:
        text = EXAMPLE.read_text().replace(EXAMPLE_ROOT, str(self.ws))
        data = json.loads(text)
        data["tool_use_id"] = tool_use_id
        return json.dumps(data).encode()

    def call(self, tool_use_id: str) -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "capture", "hook", "claude-code"],
            input=self.payload(tool_use_id),
            capture_output=True,
            cwd=self.ws,
            env=self.env(),
        )
        with self.lock:
            self.sent += 1
            if proc.returncode or proc.stdout or proc.stderr:
                self.failed_calls += 1
            if b"database is locked" in proc.stdout + proc.stderr:
                self.locked_output += 1

    def run_command(self, tag: str) -> None:
        """`capture run` of a command that passes, named by ``tag`` (found again by it)."""
        proc = subprocess.run(
            [sys.executable, "-m", "capture", "run", "--", sys.executable, "-c", f"# {tag}"],
            capture_output=True,
            cwd=self.ws,
            env=self.env(),
        )
        with self.lock:
            self.runs += 1
            if proc.returncode:
                self.failed_calls += 1
            if b"database is locked" in proc.stdout + proc.stderr:
                self.locked_output += 1

    def setup(self) -> None:
        (self.ws / "invoicer").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.ws)], check=True)
        (self.ws / "invoicer" / "totals.py").write_text(AFTER)
        self.call("toolu_setup")  # creates the store (the slow path's first run)
        self.sent = 0

    def run(self) -> None:
        end = time.monotonic() + self.seconds

        def writer(tag: int) -> None:
            n = 0
            while time.monotonic() < end:
                if n % 4 == 3:
                    self.run_command(f"bench_run_{tag}_{n}")
                else:
                    self.call(f"toolu_bench_{tag}_{n}")
                n += 1

        start = time.monotonic()
        threads = [threading.Thread(target=writer, args=(i,)) for i in range(self.writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.elapsed = time.monotonic() - start

    def recorded(self) -> tuple[int, int]:
        # drain once more, as any reader of the store does
        subprocess.run(
            [sys.executable, "-m", "capture", "episodes", "--json"],
            capture_output=True,
            cwd=self.ws,
            env=self.env(),
            timeout=600,
        )
        conn = sqlite3.connect(self.home / "data" / "capture.db", timeout=60)
        try:
            keys = conn.execute(
                "SELECT count(*) FROM proposals WHERE dedupe_key LIKE '%toolu_bench_%'"
            ).fetchone()[0]
            runs = conn.execute(
                "SELECT count(*) FROM test_runs WHERE command LIKE '%bench_run_%'"
            ).fetchone()[0]
        finally:
            conn.close()
        return int(keys), int(runs)

    def locked_log_lines(self) -> int:
        log = self.home / "state" / "log" / "hooks.log"
        if not log.exists():
            return 0
        return sum("database is locked" in line for line in log.read_text().splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-contention-") as tmp:
        phases = [Phase(1, args.seconds, Path(tmp)), Phase(args.writers, args.seconds, Path(tmp))]
        for phase in phases:
            phase.setup()
            phase.run()
        single = phases[0].sent / phases[0].elapsed
        print(f"{args.seconds:g} s per phase, one process per hook call")
        print(
            "| writers | payloads sent | recorded | lost | runs sent | recorded | lost | "
            "locked (output / log) | failed calls | payloads/s | vs 1 |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for phase in phases:
            recorded, runs = phase.recorded()
            rate = phase.sent / phase.elapsed
            print(
                f"| {phase.writers} | {phase.sent} | {recorded} | {phase.sent - recorded} | "
                f"{phase.runs} | {runs} | {phase.runs - runs} | "
                f"{phase.locked_output} / {phase.locked_log_lines()} | {phase.failed_calls} | "
                f"{rate:.1f} | {rate / single:.2f}x |"
            )


if __name__ == "__main__":
    main()
