"""Store and checkpoint figures.

- events ingested per second in batched transactions, beside the single-row-commit figure;
- 10,000 due checkpoints across 1,000 files evaluated by `observe_due`, beside the time of a
  bare pass over the same files and rows (read each file, select its due rows) as the peer.

Run: python tests/benchmarks/bench_store.py
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from capture.config import load_config  # noqa: E402
from capture.files import read_text  # noqa: E402
from capture.model import HunkInput, ProposalInput  # noqa: E402
from capture.recording.observer import observe_due  # noqa: E402
from capture.recording.recorder import record_proposal  # noqa: E402
from capture.store.database import Store  # noqa: E402

EVENTS_BATCHED = 200_000
EVENTS_SINGLE = 5_000
FILES = 1_000
PROPOSALS_PER_FILE = 10


def bench_events(home: Path) -> tuple[float, float]:
    store = Store.open(home / "events.db")
    payload = json.dumps({"hook_event_name": "PostToolUse", "tool_name": "Edit", "x": "y" * 200})
    rows = [(time.time(), "hook", "claude-code", "/ws", payload)] * 1000
    start = time.perf_counter()
    for _ in range(EVENTS_BATCHED // len(rows)):
        store.append_events(rows)
    batched = EVENTS_BATCHED / (time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(EVENTS_SINGLE):
        with store.transaction():
            store.append_event("hook", payload, at=time.time())
    single = EVENTS_SINGLE / (time.perf_counter() - start)
    store.close()
    return batched, single


def bench_checkpoints(home: Path) -> tuple[float, float, float, int]:
    env = {"CAPTURE_HOME": str(home / "cp"), "CAPTURE_WINDOWS": "1s"}
    config = load_config(env)
    store = Store.open(config.paths.db)
    ws = home / "ws"
    ws.mkdir()
    rng = random.Random(7)
    t0 = time.time() - 3600
    for f in range(FILES):
        lines = [f"value_{f}_{i} = {i}\n" for i in range(200)]
        text = "".join(lines)
        path = ws / f"m{f}.py"
        path.write_text(text)
        for p in range(PROPOSALS_PER_FILE):
            line = rng.randrange(200)
            proposal = ProposalInput(
                path=str(path),
                workspace=str(ws),
                agent="bench",
                hunks=[HunkInput(f"old_{p}\n", lines[line], line=line + 1)],
                session_id="s",
                turn_id=f"t{f}",
                file_text=text,
            )
            record_proposal(store, config, proposal, now=t0)
        # A user edit somewhere in half the files, so regions move.
        if f % 2:
            path.write_text("# header\n" + text.replace(lines[50], "changed = 1\n"))
    due = store.conn.execute(
        "SELECT count(*) FROM checkpoints WHERE observed_at IS NULL AND due_at <= ?",
        (time.time(),),
    ).fetchone()[0]

    start = time.perf_counter()
    store.due_checkpoints(time.time())
    for f in range(FILES):
        read_text(ws / f"m{f}.py")
        store.hunk_rows_of([p["id"] for p in store.live_proposals(1, f"m{f}.py")])
    peer = time.perf_counter() - start

    start, cpu_start = time.perf_counter(), time.process_time()
    report = observe_due(store, config, now=time.time())
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    assert report.checkpoints == due, (report.checkpoints, due)
    store.close()
    return elapsed, cpu, peer, due


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        batched, single = bench_events(home)
        elapsed, cpu, peer, due = bench_checkpoints(home)
    print("| figure | result | peer (same run) | ratio | target |")
    print("|---|---|---|---|---|")
    print(
        f"| events ingested, batched (1,000/txn) | {batched:,.0f}/s | single-row commits "
        f"{single:,.0f}/s | {batched / single:.0f}x | >= 50,000/s |"
    )
    print(
        f"| {due:,} due checkpoints across {FILES:,} files | {elapsed:.2f} s wall, {cpu:.2f} s "
        f"CPU | bare read of "
        f"files + due and hunk rows {peer:.2f} s | {elapsed / peer:.1f}x | <= 1 s |"
    )


if __name__ == "__main__":
    main()
