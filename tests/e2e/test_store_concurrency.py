"""Several processes write the store at once; a killed writer loses nothing it committed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from capture.connection import sqlite3
from tests.conftest import ROOT

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from capture.config import load_config
    from capture.model import HunkInput, ProposalInput
    from capture.recording.recorder import record_proposal
    from capture.store.database import Store

    worker, count = sys.argv[1], int(sys.argv[2])
    config = load_config()
    store = Store.open(config.paths.db)
    ws = sys.argv[3]
    for i in range(count):
        text = f"line {i}\\n" * 3
        proposal = ProposalInput(
            path=f"{ws}/w{worker}_{i % 20}.py", workspace=ws, agent="bench",
            hunks=[HunkInput("", f"line {i}\\n")], session_id=f"w{worker}",
            turn_id=str(i // 10), file_text=text, dedupe_key=f"{worker}-{i}",
        )
        pid = record_proposal(store, config, proposal, now=time.time())
        with store.transaction():
            store.append_event("note", {"worker": worker, "i": i}, at=time.time())
        print(pid, flush=True)
    """
)


def start_writer(home: Path, ws: Path, worker: int, count: int) -> subprocess.Popen[str]:
    env = dict(os.environ, CAPTURE_HOME=str(home), PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(worker), str(count), str(ws)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_four_writers_lose_no_row(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    writers = [start_writer(home, ws, w, 2000) for w in range(4)]
    outputs = [p.communicate(timeout=600) for p in writers]
    for proc, (_, err) in zip(writers, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err
    conn = sqlite3.connect(home / "data" / "capture.db")
    assert conn.execute("SELECT count(*) FROM proposals").fetchone()[0] == 8000
    assert conn.execute("SELECT count(*) FROM hunks").fetchone()[0] == 8000
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 16000
    assert conn.execute("SELECT count(DISTINCT id) FROM proposals").fetchone()[0] == 8000
    assert conn.execute("SELECT count(*) FROM episodes").fetchone()[0] == 4 * 200
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_sigkill_mid_burst_keeps_every_commit(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc = start_writer(home, ws, 0, 100_000)
    assert proc.stdout is not None
    committed = [proc.stdout.readline().strip() for _ in range(300)]
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate(timeout=30)
    committed += [line for line in rest.splitlines() if line.strip()]
    conn = sqlite3.connect(home / "data" / "capture.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = {row[0] for row in conn.execute("SELECT id FROM proposals")}
    assert set(committed) <= stored
    # The database still takes writes after the crash.
    again = start_writer(home, ws, 1, 5)
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert len(out.split()) == 5
