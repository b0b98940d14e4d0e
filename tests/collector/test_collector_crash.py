"""A collector killed with SIGKILL in the middle of a batch, and two collectors writing one
database at once: every episode stored exactly once, none lost."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from typing import Any

import httpx
import pytest

from tests.collector.conftest import StartCollector
from tests.support.collector_support import (
    batch_body,
    item,
    make_episode,
    make_token,
    recomputed_report,
    stored_keys,
    upload_headers,
)


def send_until_answered(
    get_url: Any, token: str, items: list[dict[str, Any]], deadline: float
) -> list[dict[str, Any]]:
    """What the uploader does: retry the same batch until the collector answers it."""
    body = batch_body(items)
    while True:
        try:
            r = httpx.post(
                f"{get_url()}/v1/episodes", content=body, headers=upload_headers(token), timeout=10
            )
            if r.status_code == 200:
                results: list[dict[str, Any]] = r.json()["results"]
                return results
            assert r.status_code == 503, r.text
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("the batch was never answered")
        time.sleep(0.05)


def test_kill_9_while_a_batch_is_half_written_then_retry_stores_each_once(
    pg_url: str, start_collector: StartCollector
) -> None:
    """PostgreSQL, deterministic: the collector has written the batch's ledger rows and waits
    (on a lock this test holds) to write the rest of the same transaction when it is killed."""
    import psycopg

    token = make_token(pg_url, "crash", "ingest")
    collector = start_collector(pg_url)
    batch = [item(make_episode(f"k{i:03d}")) for i in range(300)]
    outcome: dict[str, Any] = {}

    def upload() -> None:
        try:
            outcome["response"] = httpx.post(
                f"{collector.url}/v1/episodes",
                content=batch_body(batch),
                headers=upload_headers(token),
                timeout=30,
            )
        except httpx.TransportError as exc:
            outcome["error"] = exc

    with psycopg.connect(pg_url) as blocker:
        blocker.execute("LOCK TABLE episodes IN SHARE ROW EXCLUSIVE MODE")
        client = threading.Thread(target=upload, daemon=True)
        client.start()
        deadline = time.monotonic() + 20
        while True:
            with psycopg.connect(pg_url, autocommit=True) as probe:
                waiting = probe.execute(
                    """SELECT count(*) FROM pg_stat_activity
                       WHERE application_name = 'capture-collector'
                         AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO episodes%%'"""
                ).fetchone()
            if waiting and waiting[0] == 1:
                break
            if time.monotonic() > deadline:
                with psycopg.connect(pg_url, autocommit=True) as probe:
                    seen = probe.execute(
                        "SELECT application_name, state, wait_event_type, left(query, 60) "
                        "FROM pg_stat_activity"
                    ).fetchall()
                client.join(timeout=5)
                raise AssertionError(
                    f"the collector never reached the second insert: {seen} {outcome}"
                )
            time.sleep(0.02)
        collector.kill9()
        client.join(timeout=30)
        blocker.rollback()
    assert "error" in outcome, "the client should have seen the connection die"

    restarted = start_collector(pg_url)
    results = send_until_answered(lambda: restarted.url, token, batch, time.monotonic() + 30)
    assert Counter(r["status"] for r in results) == {"accepted": 300}
    assert stored_keys(pg_url, "crash") == Counter((b["id"], 1) for b in batch)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_kill_9_at_random_moments_under_load_loses_and_duplicates_nothing(
    backend: str, request: pytest.FixtureRequest, start_collector: StartCollector
) -> None:
    db = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    token = make_token(db, "chaos", "ingest")
    state: dict[str, Any] = {"collector": start_collector(db)}
    batches = [
        [item(make_episode(f"b{b:02d}e{i:03d}", level="full")) for i in range(200)]
        # enough that a fast machine is still uploading when the second kill comes
        for b in range(40)
    ]
    answers: list[list[dict[str, Any]]] = []
    done = threading.Event()

    def uploader() -> None:
        deadline = time.monotonic() + 90
        for batch in batches:
            answers.append(
                send_until_answered(lambda: state["collector"].url, token, batch, deadline)
            )
        done.set()

    thread = threading.Thread(target=uploader, daemon=True)
    thread.start()
    rng = random.Random(7)
    kills = 0
    while not done.is_set() and kills < 4:
        time.sleep(rng.uniform(0.2, 0.6))
        if done.is_set():
            break
        state["collector"].kill9()
        kills += 1
        state["collector"] = start_collector(db)
    thread.join(timeout=120)
    assert kills >= 2, "the uploads finished before the collector could be killed twice"
    expected = Counter((e["id"], 1) for batch in batches for e in batch)
    assert stored_keys(db, "chaos") == expected  # each exactly once
    statuses = Counter(r["status"] for answer in answers for r in answer)
    assert statuses["accepted"] + statuses["duplicate"] == len(expected)
    assert statuses["rejected"] == 0


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_collectors_on_one_database_store_each_episode_once(
    backend: str, request: pytest.FixtureRequest, start_collector: StartCollector
) -> None:
    db = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    token = make_token(db, "pair", "ingest")
    collectors = [
        start_collector(db, "--min-contributors", "1"),
        start_collector(db, "--min-contributors", "1"),
    ]
    episodes = [make_episode(f"p{i:04d}", level="metrics") for i in range(300)]
    # Every episode is sent by four clients, at revision 1 and 2, in different orders, to both.
    plans = []
    for c in range(4):
        rng = random.Random(c)
        items = [item(e, revision=1 + (i + c) % 2, level="metrics") for i, e in enumerate(episodes)]
        items += [
            item(e, revision=2 - (i + c) % 2, level="metrics") for i, e in enumerate(episodes)
        ]
        rng.shuffle(items)
        plans.append([items[i : i + 100] for i in range(0, len(items), 100)])
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def client(c: int) -> None:
        with httpx.Client(timeout=60) as http:
            for n, batch in enumerate(plans[c]):
                url = collectors[(c + n) % 2].url
                r = http.post(
                    f"{url}/v1/episodes",
                    content=batch_body(batch),
                    headers=upload_headers(token, contributor=f"c{c}"),
                )
                assert r.status_code == 200, r.text
                with lock:
                    results.extend(r.json()["results"])

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    accepted = Counter((r["id"], r["revision"]) for r in results if r["status"] == "accepted")
    keys = {(e["id"], rev) for e in episodes for rev in (1, 2)}
    assert set(accepted) == keys and set(accepted.values()) == {1}
    assert len(results) == 4 * len(keys)
    assert stored_keys(db, "pair") == Counter(keys)
    export_token = make_token(db, "pair", "export")
    r = httpx.get(
        f"{collectors[0].url}/v1/teams/pair/export",
        headers={"Authorization": f"Bearer {export_token}"},
        timeout=60,
    )
    lines = [json.loads(line) for line in r.text.splitlines()]
    assert len(lines) == 300
    assert {line["revision"] for line in lines} == {2}  # the latest revision won everywhere
    # The report (kept incrementally as revisions replace each other) equals a fresh count.
    read = {"Authorization": f"Bearer {make_token(db, 'pair', 'read')}"}
    report = httpx.get(f"{collectors[1].url}/v1/teams/pair/report", headers=read).json()
    expected = recomputed_report(lines, "pair")
    for key in ("total", "by_agent", "by_model", "by_week"):
        assert report[key] == expected[key], key
