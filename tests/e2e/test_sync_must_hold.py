"""Must hold, end to end with real processes: an uploader killed mid-batch loses and duplicates
nothing; `capture sync preview` is byte for byte what the collector receives; the planted
secrets corpus never reaches the collector's storage, and the metrics level carries no code.

Each test runs against the real team collector when this tree has it, else against the test
double (the test prints which)."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.secrets.planted_secrets import make_corpus
from tests.support.sync_e2e import Home
from tests.support.sync_support import DoubleCollector, RecordingProxy, make_collector
from tests.support.synthetic_episodes import make_episode


@pytest.fixture
def collector(tmp_path: Path):  # type: ignore[no-untyped-def]
    c = make_collector(tmp_path / "collector").start()
    print(f"running against the {c.kind}")
    yield c
    c.stop()


def test_sigkill_mid_batch_loses_nothing_and_duplicates_nothing(
    tmp_path: Path, collector: DoubleCollector
) -> None:
    n = 600
    home = Home(tmp_path)
    rng = random.Random(11)
    home.fill([make_episode(rng, i, root=str(home.ws)) for i in range(n)])
    with RecordingProxy(collector.url) as proxy:
        home.enable(proxy.url, collector.token)
        # 1. Killed while the collector has stored a batch and its answer is on the way.
        proxy.hold.clear()
        upload = home.popen("sync", "now", CAPTURE_SYNC_BATCH="100")
        assert proxy.forwarded.wait(60), upload.communicate()
        os.kill(upload.pid, signal.SIGKILL)
        upload.wait(10)
        proxy.hold.set()
        assert len(collector.episodes()) == 100  # that batch is stored...
        assert home.status()["queued"] == n  # ...and the uploader never heard it was
        # 2. Killed at random moments (anonymizing, sending, recording answers).
        for delay in (0.3, 0.9, 1.6):
            upload = home.popen("sync", "now", CAPTURE_SYNC_BATCH="50")
            time.sleep(delay)
            os.kill(upload.pid, signal.SIGKILL)
            upload.wait(10)
        # 3. A run to the end.
        final = home.run("sync", "now", CAPTURE_SYNC_BATCH="100")
    stored = collector.episodes()
    assert len(stored) == n
    assert all(revisions == [1] for revisions in stored.values())
    if isinstance(collector, DoubleCollector):
        assert set(collector.double.store_count.values()) == {1}
    sent_per_key = Counter(
        (item["id"], item["revision"])
        for body in proxy.bodies
        for item in json.loads(body)["episodes"]
    )
    assert max(sent_per_key.values()) > 1  # some were sent again, as duplicates
    status = home.status()
    assert (status["sent"], status["queued"], status["set_aside"]) == (n, 0, 0), final.stdout


def test_preview_is_byte_for_byte_what_the_collector_receives(
    tmp_path: Path, collector: DoubleCollector
) -> None:
    home = Home(tmp_path)
    rng = random.Random(12)
    episodes = [make_episode(rng, i, root=str(home.ws)) for i in range(40)]
    episodes[3]["prompt"] = 'naïve café — ünïcödé, emoji 🎉, quotes "x" and \\ backslash'
    home.fill(episodes)
    home.enable("http://127.0.0.1:9", collector.token)  # nothing is sent by enabling
    preview = home.run("sync", "preview", "--json")
    expected = preview.stdout.encode().removesuffix(b"\n")
    with RecordingProxy(collector.url) as proxy:
        home.run("sync", "enable", "--url", proxy.url)
        assert home.run("sync", "preview", "--json").stdout.encode() == preview.stdout.encode()
        home.run("sync", "now")
    assert proxy.bodies == [expected]
    items = json.loads(expected)["episodes"]
    assert len(items) == 40
    stored = collector.stored_bodies()
    for item in items:
        assert json.loads(stored[(item["id"], item["revision"])]) == item["episode"]


def test_preview_matches_the_wire_across_batches(
    tmp_path: Path, collector: DoubleCollector
) -> None:
    home = Home(tmp_path)
    rng = random.Random(13)
    home.fill([make_episode(rng, i, root=str(home.ws)) for i in range(35)])
    with RecordingProxy(collector.url) as proxy:
        home.enable(proxy.url, collector.token)
        preview = json.loads(home.run("sync", "preview", "--json").stdout)
        home.run("sync", "now", CAPTURE_SYNC_BATCH="10")
    assert len(proxy.bodies) == 4
    sent = [item for body in proxy.bodies for item in json.loads(body)["episodes"]]
    assert sent == preview["episodes"]
    # Each body is exactly the preview's serialization of its items.
    at = 0
    whole = json.dumps(preview["episodes"], ensure_ascii=False, separators=(",", ":"))
    for body in proxy.bodies:
        inner = body.decode()[len('{"episodes":[') : -2]
        assert whole[1:-1].find(inner, at) == at
        at += len(inner) + 1


def _probe(kind: str, value: str) -> list[str]:
    return value.splitlines()[1:-1] if kind == "private_key" else [value]


def test_planted_secrets_never_reach_the_collector(
    tmp_path: Path, collector: DoubleCollector
) -> None:
    episodes, planted = make_corpus()
    assert len(planted) >= 300
    assert len({p.kind for p in planted}) >= 15
    assert {p.place for p in planted} == {
        "code", "prompt", "test_output", "file_name", "commit_message"
    }  # fmt: skip
    home = Home(tmp_path)
    for e in episodes:
        e["workspace"] = str(home.ws)
    home.fill(episodes)
    home.enable(collector.url, collector.token, level="redacted")
    home.run("sync", "now")
    status = home.status()
    assert (status["sent"], status["quarantined"]) == (len(episodes), 0)
    stored = collector.stored_bytes()
    assert len(collector.episodes()) == len(episodes)
    leaks = [
        (p.kind, p.place)
        for p in planted
        for probe in _probe(p.kind, p.value)
        if probe.encode() in stored
    ]
    assert leaks == []
    assert stored.count(b"<SECRET:") >= len(planted)


def test_metrics_level_sends_no_code_at_all(tmp_path: Path, collector: DoubleCollector) -> None:
    episodes, planted = make_corpus(seed=8, episodes=40)
    home = Home(tmp_path)
    for e in episodes:
        e["workspace"] = str(home.ws)
    home.fill(episodes)
    home.enable(collector.url, collector.token, level="metrics")
    home.run("sync", "now")
    stored = collector.stored_bytes()
    assert len(collector.episodes()) == len(episodes)
    fragments: set[str] = set()
    for e in episodes:
        fragments.update(line.strip() for line in e["prompt"].splitlines())
        for p in e["proposals"]:
            fragments.add(Path(p["file"]).stem)
            for h in p["hunks"]:
                for text in (h["old_text"], h["new_text"]):
                    fragments.update(line.strip() for line in text.splitlines())
        for r in e["test_runs"]:
            fragments.update([r["command"], r["name"] or "", *r["failing_ids"]])
    fragments = {f for f in fragments if len(f) >= 8}
    fragments.update(probe for p in planted for probe in _probe(p.kind, p.value))
    assert len(fragments) > 1000
    found = sorted(f for f in fragments if f.encode() in stored)
    assert found == []
