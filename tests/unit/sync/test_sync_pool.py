"""A backlog anonymized by worker processes queues exactly what one process queues."""

from __future__ import annotations

import random
import time
from pathlib import Path

from capture.store.database import Store
from sync.anonymize import Anonymizer, Identity
from sync.refresh import POOL_THRESHOLD, refresh
from sync.settings import enable, load_settings
from tests.support.synthetic_episodes import make_episode, write_episodes


def _queue(tmp: Path, name: str, workers: int) -> dict[str, str]:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    rng = random.Random(9)
    episodes = [make_episode(rng, i, root=str(ws)) for i in range(POOL_THRESHOLD + 300)]
    with Store.open(tmp / name / "capture.db") as store:
        write_episodes(store, episodes, now=time.time())
        with store.transaction():
            enable(store.conn, now=1.0, root=str(ws), url="https://c.example", token="t")
        report = refresh(
            store, load_settings(store.conn), Anonymizer(b"k" * 32, Identity()), now=2.0,
            chunk=400, workers=workers,
        )  # fmt: skip
        assert report.queued == len(episodes)
        return dict(store.conn.execute("SELECT episode_id, payload FROM sync_outbox"))


def test_worker_processes_give_the_same_outbox(tmp_path: Path) -> None:
    one = _queue(tmp_path, "one", workers=1)
    two = _queue(tmp_path, "two", workers=2)
    assert one == two
