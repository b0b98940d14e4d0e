"""Must hold: the collector down for the first 20 s of an upload of 5,000 episodes, then up:
every episode stored exactly once.

The outage is the full 20 s (CAPTURE_TEST_OUTAGE_S can lengthen it). The uploader's backoff cap
is set to 2 s for this run (`CAPTURE_SYNC_BACKOFF=0.25s,2s`; the default is 1s,60s), so that it
notices the collector within 2 s of its return instead of up to a minute: the property under test
(nothing lost, nothing twice) does not depend on the cap, the test's length does.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from tests.support.sync_e2e import Home
from tests.support.sync_support import DoubleCollector, free_port, make_collector
from tests.support.synthetic_episodes import make_episode

EPISODES = 5000


def test_collector_down_for_20s_then_up_stores_each_episode_once(tmp_path: Path) -> None:
    outage = float(os.environ.get("CAPTURE_TEST_OUTAGE_S", "20"))
    home = Home(tmp_path)
    rng = random.Random(5)
    home.fill([make_episode(rng, i, root=str(home.ws)) for i in range(EPISODES)])
    collector = make_collector(tmp_path / "collector", port=free_port())
    print(f"running against the {collector.kind}")
    home.enable(collector.url, collector.token)

    started = time.monotonic()
    upload = home.popen("sync", "now", "--timeout", "180", CAPTURE_SYNC_BACKOFF="0.25s,2s")
    try:
        time.sleep(max(0.0, outage - (time.monotonic() - started)))
        assert upload.poll() is None, upload.communicate()
        collector.start()
        out, err = upload.communicate(timeout=150)
        took = time.monotonic() - started
        assert upload.returncode == 0, err
        stored = collector.episodes()
        assert len(stored) == EPISODES
        assert all(revisions == [1] for revisions in stored.values())
        if isinstance(collector, DoubleCollector):
            assert set(collector.double.store_count.values()) == {1}
        assert out.startswith(f"{EPISODES} episode(s) sent")
        status = home.status()
        assert (status["sent"], status["queued"], status["set_aside"]) == (EPISODES, 0, 0)
        assert took >= outage
    finally:
        if upload.poll() is None:
            upload.kill()
        collector.stop()
