"""What the report's rollup triggers cost the writers (hook commands, the server, the observer).

Records proposals through the recorder, a test run after every 4 (one episode), and observes
their checkpoints, into a fresh database; the peer is the same work on a database whose report
triggers were dropped, measured in the same run. Two cases:

- settling: each episode settles before the next one starts (the usual case: a test run follows
  one open episode);
- open episodes: nothing settles, so every test run follows every earlier episode of the
  workspace (the linking rule of the store), the worst case for the per-link triggers.

    python tests/benchmarks/bench_report_writes.py [--proposals N] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capture.config import Config  # noqa: E402
from capture.model import HunkInput, Outcome, ProposalInput, TestRunInput  # noqa: E402
from capture.paths import resolve_paths  # noqa: E402
from capture.recording.recorder import record_proposal, record_test_run  # noqa: E402
from capture.store.database import Store  # noqa: E402


def _observe_all(store: Store, at: float) -> None:
    with store.transaction():
        due = store.conn.execute(
            "SELECT id, proposal_id FROM checkpoints WHERE observed_at IS NULL AND window != 'late'"
        ).fetchall()
        for checkpoint_id, proposal_id in due:
            store.record_checkpoint(
                checkpoint_id,
                observed_at=at,
                similarity=1.0,
                retention=1.0,
                outcome=Outcome.KEPT,
                via="disk",
            )
            store.set_outcome(
                proposal_id,
                outcome=Outcome.KEPT,
                reason="bench",
                similarity=1.0,
                retention=1.0,
                settled_at=at,
            )


def run(proposals: int, *, triggers: bool, settle: bool) -> float:
    """Milliseconds per proposal (with its share of runs and observations)."""
    home = Path(tempfile.mkdtemp(prefix="capture-bench-writes-"))
    store = Store.open(home / "capture.db")
    if not triggers:
        names = store.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'report_%'"
        ).fetchall()
        for (name,) in names:
            store.conn.execute(f"DROP TRIGGER {name}")
    config = Config(paths=resolve_paths({"CAPTURE_HOME": str(home)}))
    ws = home / "ws"
    start = time.perf_counter()
    for i in range(proposals):
        now = 1.9e9 + i * 100
        record_proposal(
            store,
            config,
            ProposalInput(
                path=str(ws / f"src/mod{i % 20}.py"),
                workspace=str(ws),
                agent="claude-code",
                model="opus",
                session_id="s",
                turn_id=f"t{i // 4}",
                hunks=[HunkInput("", f"value = {i}\n")],
                file_text=f"value = {i}\n",
            ),
            now=now,
        )
        if i % 4 == 3:
            run = TestRunInput(
                command="pytest",
                source="wrapper",
                started_at=now + 5,
                workspace=str(ws),
                exit_code=int(i % 8 == 3),
            )
            record_test_run(store, run, now=now + 5)
            if settle:
                _observe_all(store, now + 50)
    if not settle:
        _observe_all(store, 1.9e9 + proposals * 100)
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed / proposals * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proposals", type=int, default=800)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"best of {args.repeat} runs; load average {load:.1f} on {os.cpu_count()} CPUs")
    print(
        f"| case ({args.proposals} proposals) | with triggers ms/proposal | peer: without | ratio |"
    )
    print("|---|---:|---:|---:|")
    for label, settle in (("settling", True), ("open episodes", False)):
        with_t = min(run(args.proposals, triggers=True, settle=settle) for _ in range(args.repeat))
        without = min(
            run(args.proposals, triggers=False, settle=settle) for _ in range(args.repeat)
        )
        print(f"| {label} | {with_t:.2f} | {without:.2f} | {with_t / without:.2f} |")


if __name__ == "__main__":
    main()
