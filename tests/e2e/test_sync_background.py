"""The background uploader `capture serve` starts: nothing at all while sync is off; uploads on
its own once on."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capture.cli import COMMANDS
from capture.config import load_config
from capture.store.database import Store
from sync.service import start_background_sync
from sync.settings import enable
from tests.conftest import capture_env
from tests.support.sync_support import CollectorDouble
from tests.support.synthetic_episodes import make_episode, write_episodes


def test_nothing_starts_while_sync_is_off(capture_home: Path) -> None:
    code = (
        "import sys, threading; from capture.config import load_config; "
        "from sync.service import start_background_sync; "
        "w = start_background_sync(load_config()); "
        "print(w, threading.active_count(), 'httpx' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=capture_env(capture_home), capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    # No worker, no thread, and not even the HTTP client imported.
    assert out.stdout.split() == ["None", "1", "False"]


def test_uploads_in_the_background_once_enabled(
    capture_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config()
    ws = tmp_path / "ws"
    ws.mkdir()
    rng = random.Random(4)
    with CollectorDouble(token="tok") as collector, Store.open(config.paths.db) as store:
        write_episodes(store, [make_episode(rng, i, root=str(ws)) for i in range(30)], now=0.0)
        with store.transaction():
            enable(store.conn, now=time.time(), root=str(ws), url=collector.url, token="tok")
        worker = start_background_sync(config, interval=0.2)
        assert worker is not None
        try:
            deadline = time.time() + 20
            while len(collector.stored) < 30 and time.time() < deadline:
                time.sleep(0.1)
            assert len(collector.stored) == 30
        finally:
            worker.stop()
        assert not worker.thread.is_alive()
        sent = store.conn.execute("SELECT count(*) FROM sync_outbox WHERE state = 'sent'")
        assert sent.fetchone()[0] == 30


@pytest.mark.skipif("serve" not in COMMANDS, reason="`capture serve` is not in this tree yet")
def test_capture_serve_uploads_in_the_background(capture_home: Path, tmp_path: Path) -> None:
    config = load_config()
    ws = tmp_path / "ws"
    ws.mkdir()
    rng = random.Random(6)
    with CollectorDouble(token="tok") as collector:
        with Store.open(config.paths.db) as store:
            write_episodes(store, [make_episode(rng, i, root=str(ws)) for i in range(5)], now=0.0)
            with store.transaction():
                enable(store.conn, now=time.time(), root=str(ws), url=collector.url, token="tok")
        server = subprocess.Popen(
            [sys.executable, "-m", "capture", "serve"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=capture_env(capture_home),
        )  # fmt: skip
        try:
            deadline = time.time() + 30
            while len(collector.stored) < 5 and time.time() < deadline:
                time.sleep(0.1)
            assert len(collector.stored) == 5
        finally:
            server.kill()
            server.wait(10)
