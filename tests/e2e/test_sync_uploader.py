"""The uploader against a real HTTP server on loopback (a test double of the collector): what
each kind of answer does to the outbox."""

from __future__ import annotations

import dataclasses
import gzip
import json
import threading
import time
from pathlib import Path

import pytest

from capture.store.database import Store
from sync.outbox import Outbox, RowState
from sync.uploader import Uploader, UploadOptions
from tests.support.sync_support import CollectorDouble, Reply, free_port

FAST = UploadOptions(batch_size=3, backoff_base=0.02, backoff_cap=0.1, max_attempts=4, timeout=5)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "capture.db")


@pytest.fixture
def collector() -> CollectorDouble:
    with CollectorDouble(token="secret-token") as double:
        yield double


def queue(store: Store, *ids: str) -> None:
    outbox = Outbox(store.conn)
    with store.transaction():
        for i in ids:
            payload = json.dumps({"schema": "agent-capture/episode@1", "id": i, "proposals": []})
            outbox.add(i, 1, level="metrics", content_hash=i, payload=payload, now=time.time())


def uploader(store: Store, url: str, token: str = "secret-token", **options: object) -> Uploader:
    opts = dataclasses.replace(FAST, **options) if options else FAST  # type: ignore[arg-type]
    return Uploader(store, url=url, token=token, contributor="c0ffee", options=opts)


def states(store: Store) -> dict[str, str]:
    return dict(store.conn.execute("SELECT episode_id, state FROM sync_outbox").fetchall())


def test_batches_are_gzipd_json_with_the_contract_headers(
    store: Store, collector: CollectorDouble
) -> None:
    queue(store, *[f"e{i}" for i in range(7)])
    report = uploader(store, collector.url).drain(deadline=time.time() + 10)
    assert report.sent == 7 and report.requests == 3
    assert set(states(store).values()) == {"sent"}
    assert sorted(collector.episodes()) == [f"e{i}" for i in range(7)]
    headers = collector.headers[0]
    assert headers["Content-Encoding"] == "gzip"
    assert headers["Content-Type"] == "application/json"
    assert headers["Authorization"] == "Bearer secret-token"
    assert headers["X-Capture-Contributor"] == "c0ffee"
    first = json.loads(collector.bodies[0])
    assert [i["idempotency_key"] for i in first["episodes"]] == ["e0:1", "e1:1", "e2:1"]


def test_a_duplicate_answer_counts_as_sent(store: Store, collector: CollectorDouble) -> None:
    queue(store, "e1")
    collector.stored[("e1", 1)] = "{}"
    report = uploader(store, collector.url).drain(deadline=time.time() + 10)
    assert report.sent == 1 and report.duplicates == 1
    assert states(store) == {"e1": "sent"}


def test_a_refused_token_stops_and_leaves_the_rows_alone(
    store: Store, collector: CollectorDouble
) -> None:
    queue(store, "e1", "e2")
    report = uploader(store, collector.url, token="wrong").drain(deadline=time.time() + 10)
    assert report.auth_failed and "401" in (report.last_error or "")
    assert report.requests == 1
    assert states(store) == {"e1": "queued", "e2": "queued"}
    assert store.conn.execute("SELECT max(attempts) FROM sync_outbox").fetchone()[0] == 0


def test_a_422_batch_is_halved_until_the_bad_episode_is_alone(
    store: Store, collector: CollectorDouble
) -> None:
    ids = [f"e{i}" for i in range(8)]
    queue(store, *ids)

    def refuse(items: list[dict]) -> Reply | None:
        if any(i["id"] == "e5" for i in items):
            return Reply(422, b'{"error":"invalid","message":"episodes[0].episode: bad"}')
        return None

    collector.refuse_batch = refuse
    report = uploader(store, collector.url, batch_size=8).drain(deadline=time.time() + 10)
    assert states(store) == {i: ("set_aside" if i == "e5" else "sent") for i in ids}
    assert report.set_aside_ids == ["e5:1"]
    [row] = Outbox(store.conn).listed(RowState.SET_ASIDE)
    assert row["last_error"].startswith("HTTP 422")


def test_413_makes_batches_smaller(store: Store, collector: CollectorDouble) -> None:
    ids = [f"e{i}" for i in range(9)]
    queue(store, *ids)
    collector.refuse_batch = lambda items: Reply(413) if len(items) > 2 else None
    up = uploader(store, collector.url, batch_size=9)
    up.drain(deadline=time.time() + 10)
    assert set(states(store).values()) == {"sent"}
    assert up.batch_limit <= 2
    assert sorted(collector.episodes()) == ids


def test_a_rejected_episode_is_set_aside_and_blocks_nothing(
    store: Store, collector: CollectorDouble
) -> None:
    queue(store, "e1", "e2", "e3")
    collector.reject = lambda item: "level full is not accepted" if item["id"] == "e2" else None
    report = uploader(store, collector.url).drain(deadline=time.time() + 10)
    assert states(store) == {"e1": "sent", "e2": "set_aside", "e3": "sent"}
    assert report.set_aside == 1
    [row] = Outbox(store.conn).listed(RowState.SET_ASIDE)
    assert row["last_error"] == "rejected by the collector: level full is not accepted"


def test_429_waits_as_long_as_retry_after_says(store: Store, collector: CollectorDouble) -> None:
    queue(store, "e1")
    collector.script = [Reply(429, b"slow down", {"Retry-After": "1"})]
    started = time.monotonic()
    report = uploader(store, collector.url).drain(deadline=time.time() + 10)
    assert time.monotonic() - started >= 1.0
    assert report.sent == 1 and report.requests == 2
    assert store.conn.execute("SELECT attempts FROM sync_outbox").fetchone()[0] == 1


def test_5xx_backs_off_and_tries_again(store: Store, collector: CollectorDouble) -> None:
    queue(store, "e1", "e2")
    collector.script = [Reply(503, b"busy"), Reply(502, b"bad gateway")]
    report = uploader(store, collector.url).drain(deadline=time.time() + 10)
    assert report.sent == 2 and report.retried >= 2
    assert set(states(store).values()) == {"sent"}
    # Each row counts every request it was in: the failed ones and the one that worked.
    tries = {
        i: sum(1 for b in collector.bodies if f'"idempotency_key":"{i}:1"' in b.decode())
        for i in ("e1", "e2")
    }
    attempts = dict(store.conn.execute("SELECT episode_id, attempts FROM sync_outbox"))
    assert attempts == tries and min(tries.values()) >= 2


def test_a_row_that_always_fails_is_isolated_then_set_aside(
    store: Store, collector: CollectorDouble
) -> None:
    ids = [f"e{i}" for i in range(6)]
    queue(store, *ids)
    collector.refuse_batch = lambda items: (
        Reply(500, b"boom") if any(i["id"] == "e2" for i in items) else None
    )
    report = uploader(store, collector.url, max_attempts=4).drain(deadline=time.time() + 20)
    assert states(store) == {i: ("set_aside" if i == "e2" else "sent") for i in ids}
    [row] = Outbox(store.conn).listed(RowState.SET_ASIDE)
    assert row["attempts"] == 4 and row["last_error"].startswith("gave up after 4 attempts")
    assert report.sent == 5


def test_an_answer_that_forgets_an_episode_gets_it_sent_again(
    store: Store, collector: CollectorDouble
) -> None:
    queue(store, "e1", "e2")
    forgotten: set[str] = set()

    def omit(item: dict) -> bool:
        if item["id"] == "e2" and "e2" not in forgotten:
            forgotten.add("e2")
            return True
        return False

    collector.omit = omit
    uploader(store, collector.url).drain(deadline=time.time() + 10)
    assert states(store) == {"e1": "sent", "e2": "sent"}
    assert collector.store_count == {("e1", 1): 1, ("e2", 1): 1}


def test_an_unreachable_collector_costs_no_attempts(store: Store) -> None:
    queue(store, "e1", "e2")
    dead = f"http://127.0.0.1:{free_port()}"
    report = uploader(store, dead).drain(deadline=time.time() + 0.6)
    assert report.timed_out and report.unreachable >= 2
    assert "unreachable" in (report.last_error or "")
    assert states(store) == {"e1": "queued", "e2": "queued"}
    assert store.conn.execute("SELECT max(attempts) FROM sync_outbox").fetchone()[0] == 0


def test_stop_ends_a_drain_that_is_waiting(store: Store) -> None:
    queue(store, "e1")
    stop = threading.Event()
    dead = f"http://127.0.0.1:{free_port()}"
    up = uploader(store, dead, backoff_base=5.0, backoff_cap=5.0)
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    report = up.drain(stop=stop)
    assert report.stopped and time.monotonic() - started < 3


def test_the_body_on_the_wire_is_gzip(store: Store, collector: CollectorDouble) -> None:
    # The double decodes what it receives; check the client really compressed it.
    queue(store, "e1")
    seen: list[bytes] = []
    import httpx

    def record(request: httpx.Request) -> None:
        seen.append(request.content)

    client = httpx.Client(event_hooks={"request": [record]})
    Uploader(
        store, url=collector.url, token="secret-token", contributor="c", options=FAST, client=client
    ).drain(deadline=time.time() + 5)
    assert json.loads(gzip.decompress(seen[0]))["episodes"][0]["id"] == "e1"
