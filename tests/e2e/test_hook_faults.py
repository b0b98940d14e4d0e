"""Never lose, never stall: a payload the applier cannot apply is set aside with its error and
the queue goes on; one it cannot write yet (another writer holds the database) stays queued;
the hook exits 0 whatever its arguments; a FIFO named by an edit blocks nobody."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from capture.connection import sqlite3
from tests.conftest import RunCapture, capture_env
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    example,
    hook,
    log_lines,
    make_workspace,
    no_agent_env,
    rows,
)


def wait_for_live_queue(home: Path, timeout: float = 30.0) -> None:
    """Until no payload is waiting to be applied (set-aside ones are not waiting)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = rows(home, "SELECT count(*) FROM hook_inbox WHERE set_aside_at IS NULL")
        if not left or left[0][0] == 0:
            return
        time.sleep(0.02)
    raise AssertionError("queued hook payloads were not applied")


def edit_payload(ws: Path, tool_use_id: str, file_path: str | None = None) -> dict[str, Any]:
    payload = example("claude_code_posttooluse_edit.json", ws)
    payload["tool_use_id"] = tool_use_id
    if file_path is not None:
        payload["tool_input"]["file_path"] = file_path
        payload["tool_response"]["filePath"] = file_path
    return payload


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def test_a_poisoned_payload_is_set_aside_and_the_queue_goes_on(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    hook(run_capture, "claude-code", edit_payload(ws, "toolu_first"), cwd=ws)  # the store exists
    # A queued row the applier cannot apply: a run queued by `capture run` whose fields are
    # not a run's (as a wrapper of another version, or a damaged row, would leave it).
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    with conn:
        conn.execute(
            "INSERT INTO hook_inbox (at, agent, event, payload, cwd, env)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (time.time(), "capture-run", None, b'{"argv": ["pytest"], "cwd": 5}', str(ws), None),
        )
    conn.close()
    result = run_capture(
        "hook", "claude-code", input=json.dumps(edit_payload(ws, "toolu_valid")), cwd=ws
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    wait_for_live_queue(capture_home)

    keys = {r[0] for r in rows(capture_home, "SELECT dedupe_key FROM proposals")}
    assert any("toolu_valid" in k for k in keys), keys
    (aside,) = rows(capture_home, "SELECT * FROM hook_inbox")
    assert aside["set_aside_at"] is not None and aside["attempts"] == 1
    assert aside["error"]
    assert any("set aside" in line for line in log_lines(capture_home))

    for command in (("episodes", "--json"), ("report",)):
        result = run_capture(*command, cwd=ws)
        assert result.returncode == 0, (command, result.stderr)
    doctor = run_capture("doctor", cwd=ws)
    assert "1 payload(s) set aside" in doctor.stdout, doctor.stdout
    assert f"#{aside['id']} capture-run" in doctor.stdout
    listed = json.loads(run_capture("doctor", "--json", cwd=ws).stdout)
    assert [r["id"] for r in listed["database"]["set_aside"]] == [aside["id"]]

    # retried: it fails the same way, so it is set aside again, its attempts counted
    retried = run_capture("doctor", "--retry", cwd=ws)
    assert "retried   0 of 1" in retried.stdout, retried.stdout
    (again,) = rows(capture_home, "SELECT * FROM hook_inbox")
    assert (again["id"], again["attempts"]) == (aside["id"], 2)
    assert again["set_aside_at"] >= aside["set_aside_at"]


def test_a_set_aside_payload_that_applies_now_leaves_the_queue(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    hook(run_capture, "claude-code", edit_payload(ws, "toolu_first"), cwd=ws)
    conn = sqlite3.connect(capture_home / "data" / "capture.db")
    with conn:
        # a good payload set aside earlier (say, by a fault since fixed)
        conn.execute(
            "INSERT INTO hook_inbox (at, agent, event, payload, cwd, env, set_aside_at, error,"
            " attempts) VALUES (?, 'claude-code', NULL, ?, ?, '', ?, 'earlier fault', 1)",
            (time.time(), json.dumps(edit_payload(ws, "toolu_later")).encode(), str(ws), 1.0),
        )
    conn.close()
    retried = run_capture("doctor", "--retry", cwd=ws)
    assert "retried   1 of 1" in retried.stdout, retried.stdout
    assert "set aside" not in retried.stdout.split("retried", 1)[1]
    assert rows(capture_home, "SELECT * FROM hook_inbox") == []
    keys = {r[0] for r in rows(capture_home, "SELECT dedupe_key FROM proposals")}
    assert any("toolu_later" in k for k in keys), keys


def _bursts(db: Path, stop: threading.Event) -> None:
    """Another process's write transactions, held in bursts."""
    script = (
        "import sqlite3, sys, time\n"
        "conn = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)\n"
        "end = time.monotonic() + float(sys.argv[2])\n"
        "while time.monotonic() < end:\n"
        "    conn.execute('BEGIN IMMEDIATE')\n"
        "    conn.execute(\"INSERT INTO events (at, kind, payload) VALUES (0, 'burst', 'x')\")\n"
        "    time.sleep(0.4)\n"
        "    conn.execute('ROLLBACK')\n"
        "    time.sleep(0.1)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(db), "10"], check=True, timeout=60)
    stop.set()


def test_contention_drops_nothing(ws: Path, capture_home: Path, run_capture: RunCapture) -> None:
    hook(run_capture, "claude-code", edit_payload(ws, "toolu_first"), cwd=ws)
    env = capture_env(capture_home)
    writer = (
        "import json, subprocess, sys, time\n"
        "payload = json.loads(sys.argv[1]); tag = sys.argv[2]; end = time.monotonic() + 10\n"
        "n = 0; bad = []\n"
        "while time.monotonic() < end:\n"
        "    payload['tool_use_id'] = f'toolu_{tag}_{n}'\n"
        "    r = subprocess.run([sys.executable, '-m', 'capture', 'hook', 'claude-code'],\n"
        "                       input=json.dumps(payload).encode(), capture_output=True)\n"
        "    if r.returncode or r.stdout or r.stderr:\n"
        "        bad.append([r.returncode, r.stdout.decode(), r.stderr.decode()])\n"
        "    n += 1\n"
        "print(json.dumps({'sent': n, 'bad': bad}))\n"
    )
    payload = json.dumps(edit_payload(ws, "toolu_x"))
    stop = threading.Event()
    burster = threading.Thread(target=_bursts, args=(capture_home / "data" / "capture.db", stop))
    burster.start()
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", writer, payload, str(i)],
            cwd=ws,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    sent = 0
    for proc in writers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        result = json.loads(out)
        assert result["bad"] == [], result["bad"][:3]
        sent += result["sent"]
    burster.join(timeout=60)
    # drain once more, as any reader does
    assert run_capture("episodes", "--json", cwd=ws).returncode == 0
    wait_for_live_queue(capture_home, timeout=120)
    keys = {
        r[0]
        for r in rows(capture_home, "SELECT dedupe_key FROM proposals")
        if "toolu_" in r[0] and "toolu_first" not in r[0]
    }
    assert sent > 8
    assert len(keys) == sent, (len(keys), sent)
    assert rows(capture_home, "SELECT * FROM hook_inbox") == []


def test_a_payload_that_cannot_be_written_yet_stays_queued(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    hook(run_capture, "claude-code", edit_payload(ws, "toolu_first"), cwd=ws)
    conn = sqlite3.connect(
        capture_home / "data" / "capture.db", isolation_level=None, check_same_thread=False
    )
    conn.execute(
        "INSERT INTO hook_inbox (at, agent, event, payload, cwd, env) "
        "VALUES (?, 'claude-code', NULL, ?, ?, '')",
        (time.time(), json.dumps(edit_payload(ws, "toolu_waited")).encode(), str(ws)),
    )
    conn.execute("BEGIN IMMEDIATE")  # another writer, holding the database
    # held past the applier's bounded wait: a reader drains, gives up on the row, and returns
    release = threading.Timer(7.0, lambda: conn.execute("COMMIT"))
    release.start()
    try:
        result = run_capture("episodes", "--json", cwd=ws)
    finally:
        release.join()
    assert result.returncode == 0, result.stderr
    assert "locked" not in result.stdout + result.stderr
    conn.close()
    (row,) = rows(capture_home, "SELECT * FROM hook_inbox")
    assert (row["set_aside_at"], row["attempts"]) == (None, 0)
    assert any("left for the next drain" in line for line in log_lines(capture_home))
    assert run_capture("episodes", "--json", cwd=ws).returncode == 0
    assert rows(capture_home, "SELECT * FROM hook_inbox") == []
    keys = {r[0] for r in rows(capture_home, "SELECT dedupe_key FROM proposals")}
    assert any("toolu_waited" in k for k in keys), keys


@pytest.mark.parametrize(
    "args",
    [
        [b"claude-code", b"--bogus"],
        [b"claude-code", b"--event"],
        [b"claude-code", os.fsencode("--event=PostToolUse\udcff")],
        [os.fsencode("claude-code\udcff")],
        [b"claude-code", os.fsencode("\udcfe\udcff")],
        [],
    ],
)
def test_any_arguments_exit_0_with_empty_stdout(
    ws: Path, capture_home: Path, args: list[bytes]
) -> None:
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"capture", b"hook", *args],
        input=b"",
        capture_output=True,
        cwd=ws,
        env=capture_env(capture_home),
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert log_lines(capture_home), "what was ignored is logged"


def test_a_fifo_named_by_an_edit_blocks_nobody(
    ws: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    hook(run_capture, "claude-code", edit_payload(ws, "toolu_first"), cwd=ws)
    fifo = ws / "invoicer" / "pipe.py"
    os.mkfifo(fifo)
    body = json.dumps(edit_payload(ws, "toolu_fifo", str(fifo)))
    proc = subprocess.run(
        [sys.executable, "-m", "capture", "hook", "claude-code"],
        input=body.encode(),
        capture_output=True,
        cwd=ws,
        env=capture_env(capture_home),
        timeout=10,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    wait_for_live_queue(capture_home, timeout=10)
    # a reader (which drains, then observes the checkpoints) returns too
    later = subprocess.run(
        [sys.executable, "-m", "capture", "episodes", "--json"],
        capture_output=True,
        cwd=ws,
        env=capture_env(capture_home),
        timeout=10,
    )
    assert later.returncode == 0, later.stderr
    (row,) = rows(capture_home, "SELECT * FROM proposals WHERE path = 'invoicer/pipe.py'")
    assert (row["outcome"], row["reason"]) == ("lost", "unreadable")


def test_a_run_whose_write_meets_contention_is_queued(ws: Path, capture_home: Path) -> None:
    from capture.config import load_config
    from capture.hooks.queue import drain
    from capture.model import CaseResult
    from capture.store.database import Store
    from capture.testruns.results import choose_results
    from capture.testruns.sources.wrapper import record_wrapped, wrapped_run

    config = load_config()
    store = Store.open(config.paths.db)
    other = sqlite3.connect(config.paths.db, isolation_level=None, check_same_thread=False)
    try:
        run = wrapped_run(
            ["pytest", "-q"],
            cwd=str(ws),
            workspace=str(ws),
            name="unit",
            started_at=time.time(),
            duration_s=1.5,
            exit_code=1,
        )
        results = choose_results()
        results.failed, results.failing_ids = 1, ["tests/test_totals.py::test_tax"]
        results.cases = [CaseResult("tests/test_totals.py::test_tax", "failed")]
        other.execute("BEGIN IMMEDIATE")  # another writer holds the store
        store.conn.execute("PRAGMA busy_timeout=200")
        release = threading.Timer(1.0, lambda: other.execute("COMMIT"))
        release.start()
        key = record_wrapped(store, config, run, results)
        release.join()
        (queued,) = store.conn.execute("SELECT agent, payload FROM hook_inbox").fetchall()
        assert queued[0] == "capture-run" and key.encode() in bytes(queued[1])
        assert drain(store, config) == 1
        (row,) = store.conn.execute(
            "SELECT name, exit_code, failed FROM test_runs WHERE dedupe_key = ?", (key,)
        ).fetchall()
        assert tuple(row) == ("unit", 1, 1)
    finally:
        other.close()
        store.close()


def test_a_payload_that_failed_half_way_is_recorded_once_when_retried(
    ws: Path, capture_home: Path, run_capture: RunCapture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from capture.config import load_config
    from capture.hooks import ingest, queue
    from capture.store.database import Store

    hook(run_capture, "claude-code", edit_payload(ws, "toolu_first"), cwd=ws)
    db = capture_home / "data" / "capture.db"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO hook_inbox (at, agent, event, payload, cwd, env) "
            "VALUES (?, 'claude-code', NULL, ?, ?, '')",
            (time.time(), json.dumps(edit_payload(ws, "toolu_half")).encode(), str(ws)),
        )
    conn.close()
    before = rows(capture_home, "SELECT count(*) FROM events")[0][0]

    def fails_after_the_records(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("a fault after the payload's rows were written")

    # The fault strikes once its event and proposal are written, before it leaves the queue.
    monkeypatch.setattr(ingest, "observe_workspace", fails_after_the_records)
    store = Store.open(db)
    try:
        queue.drain(store, load_config())
    finally:
        store.close()
    monkeypatch.undo()
    (aside,) = rows(capture_home, "SELECT * FROM hook_inbox")
    assert aside["set_aside_at"] is not None and "a fault after" in aside["error"]
    assert rows(capture_home, "SELECT count(*) FROM events")[0][0] == before  # nothing kept
    retried = run_capture("doctor", "--retry", cwd=ws)
    assert "retried   1 of 1" in retried.stdout, retried.stdout
    assert rows(capture_home, "SELECT * FROM hook_inbox") == []
    assert rows(capture_home, "SELECT count(*) FROM events")[0][0] == before + 1
    keys = [r[0] for r in rows(capture_home, "SELECT dedupe_key FROM proposals")]
    assert len([k for k in keys if "toolu_half" in k]) == 1, keys
