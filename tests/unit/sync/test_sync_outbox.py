"""Outbox decisions as plain functions, and the outbox table behind them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import pytest

from capture.errors import ConfigError, InputError
from capture.store.database import Store
from sync.outbox import (
    Outbox,
    Row,
    RowState,
    Verdict,
    backoff_delay,
    body_for,
    classify_status,
    item_json,
    next_revision,
    parse_retry_after,
    read_results,
)
from sync.settings import ALL, disable, enable, load_settings, upload_options, validate_url


def test_revisions() -> None:
    assert next_revision(None, "h1") == 1
    assert next_revision((1, "h1"), "h1") is None
    assert next_revision((1, "h1"), "h2") == 2
    assert next_revision((7, "h1"), "h2") == 8


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    lows = [backoff_delay(n, base=1.0, cap=60.0, rand=0.0) for n in range(1, 9)]
    highs = [backoff_delay(n, base=1.0, cap=60.0, rand=0.999999) for n in range(1, 9)]
    assert lows == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert [round(h) for h in highs] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert all(lo < hi for lo, hi in zip(lows, highs, strict=True))


def test_retry_after() -> None:
    now = 1_800_000_000.0
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after(" 0 ", now) == 0.0
    later = format_datetime(datetime.fromtimestamp(now + 30, UTC), usegmt=True)
    assert parse_retry_after(later, now) == pytest.approx(30.0)
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


@pytest.mark.parametrize(
    ("status", "size", "verdict"),
    [
        (200, 10, Verdict.RESULTS),
        (401, 10, Verdict.AUTH),
        (403, 1, Verdict.AUTH),
        (413, 10, Verdict.SPLIT),
        (413, 1, Verdict.SET_ASIDE),
        (422, 10, Verdict.SPLIT),
        (422, 1, Verdict.SET_ASIDE),
        (400, 1, Verdict.SET_ASIDE),
        (429, 10, Verdict.RATE_LIMITED),
        (408, 10, Verdict.RETRY),
        (500, 10, Verdict.RETRY),
        (503, 1, Verdict.RETRY),
        (302, 1, Verdict.RETRY),
    ],
)
def test_status_verdicts(status: int, size: int, verdict: Verdict) -> None:
    assert classify_status(status, size) is verdict


def _rows() -> list[Row]:
    return [Row(i, f"e{i}", 1 + i % 2, "redacted", '{"id":"e' + str(i) + '"}', 0) for i in range(4)]


def test_reading_results() -> None:
    rows = _rows()
    answer = {
        "results": [
            {"id": "e0", "revision": 1, "status": "accepted"},
            {"id": "e1", "revision": 2, "status": "duplicate"},
            {"id": "e2", "revision": 1, "status": "rejected", "error": "schema"},
            {"id": "e3", "revision": 99, "status": "accepted"},  # not what was sent
            {"id": "zz", "revision": 1, "status": "accepted"},
            {"id": "e3", "revision": 2, "status": "maybe"},
            "junk",
        ]
    }
    assert read_results(rows, answer) == {
        0: ("accepted", None),
        1: ("duplicate", None),
        2: ("rejected", "schema"),
    }
    assert read_results(rows, {"oops": 1}) == {}
    assert read_results(rows, []) == {}


def test_body_is_the_contract() -> None:
    rows = _rows()[:2]
    body = json.loads(body_for(rows))
    assert body == {
        "episodes": [
            {
                "id": "e0",
                "revision": 1,
                "idempotency_key": "e0:1",
                "level": "redacted",
                "episode": {"id": "e0"},
            },
            {
                "id": "e1",
                "revision": 2,
                "idempotency_key": "e1:2",
                "level": "redacted",
                "episode": {"id": "e1"},
            },
        ]
    }
    assert json.loads(item_json(Row(0, 'a"b', 1, "full", "{}", 0)))["id"] == 'a"b'


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "capture.db")


def _add(outbox: Outbox, episode_id: str, revision: int, digest: str, now: float = 100.0) -> None:
    with outbox.conn:
        outbox.add(episode_id, revision, level="redacted", content_hash=digest,
                   payload="{}", now=now)  # fmt: skip


def test_a_new_revision_supersedes_the_waiting_one(store: Store) -> None:
    outbox = Outbox(store.conn)
    _add(outbox, "e1", 1, "h1")
    assert outbox.latest(["e1"]) == {"e1": (1, "h1")}
    _add(outbox, "e1", 2, "h2")
    assert [(r.episode_id, r.revision) for r in outbox.queued()] == [("e1", 2)]
    assert outbox.counts()["superseded"] == 1
    assert outbox.latest(["e1", "nope"]) == {"e1": (2, "h2")}


def test_failures_back_off_and_the_limit_sets_aside(store: Store) -> None:
    outbox = Outbox(store.conn)
    _add(outbox, "e1", 1, "h1")
    _add(outbox, "e2", 1, "h1")
    [r1, r2] = outbox.due(200.0, 10)
    for i in range(3):
        assert outbox.failed([(r1.id, 300.0 + i, "HTTP 503")], max_attempts=3) == (
            1 if i == 2 else 0
        )
    assert outbox.due(250.0, 10) == [r2]  # the failing row waits; newer rows do not
    assert outbox.counts()["set_aside"] == 1
    [listed] = outbox.listed(RowState.SET_ASIDE)
    assert listed["last_error"] == "gave up after 3 attempts: HTTP 503"
    assert outbox.retry_set_aside() == 1
    assert {r.episode_id for r in outbox.due(1000.0, 10)} == {"e1", "e2"}


def test_unreachable_counts_no_attempt(store: Store) -> None:
    outbox = Outbox(store.conn)
    _add(outbox, "e1", 1, "h1")
    [row] = outbox.due(200.0, 10)
    outbox.note_error([row.id], "collector unreachable")
    [again] = outbox.due(200.0, 10)
    assert again.attempts == 0


def test_settings_enable_disable(store: Store, tmp_path: Path) -> None:
    conn = store.conn
    assert not load_settings(conn).enabled
    with pytest.raises(InputError, match="--url is required"):
        enable(conn, now=1.0, root="/w")
    s = enable(conn, now=1.0, root="/w", url="https://c.example/", token="t", level="metrics",
               exclude=["secret/**"])  # fmt: skip
    assert s.active and s.url == "https://c.example"
    assert s.opt_in_for("/w") and s.opt_in_for("/w").level.value == "metrics"  # type: ignore[union-attr]
    assert s.opt_in_for("/other") is None
    s = enable(conn, now=2.0, root=ALL)  # url and token are kept
    assert s.opt_in_for("/other").root == ALL  # type: ignore[union-attr]
    assert s.opt_in_for("/w").exclude == ("secret/**",)  # type: ignore[union-attr]
    s = enable(conn, now=3.0, root="/w", level="full")  # globs are kept when not given
    assert s.opt_in_for("/w").exclude == ("secret/**",)  # type: ignore[union-attr]
    # One workspace out by name: out under --all too, the others stay in.
    done = disable(conn, now=4.0, root="/w")
    assert done.was_in and done.removed == ("/w",)
    s = load_settings(conn)
    assert s.opt_in_for("/w") is None and s.opted_out == ("/w",)
    assert s.opt_in_for("/other").root == ALL  # type: ignore[union-attr]
    enable(conn, now=4.4, root=ALL, level="metrics")
    s = enable(conn, now=4.5, root=ALL)
    assert s.opt_in_for("/w") is None  # --all again does not bring back what was taken out
    assert s.opt_in_for("/other").level.value == "metrics"  # type: ignore[union-attr]
    s = enable(conn, now=4.6, root="/w")
    assert s.opt_in_for("/w").root == "/w" and s.opted_out == ()  # type: ignore[union-attr]
    # ...with the level and globs it had before it was taken out.
    assert s.opt_in_for("/w").level.value == "full"  # type: ignore[union-attr]
    assert s.opt_in_for("/w").exclude == ("secret/**",)  # type: ignore[union-attr]
    # --all (or no name) turns sync off and removes every opt-in, single ones included.
    done = disable(conn, now=6.0, root=ALL)
    assert done.was_in and set(done.removed) == {ALL, "/w"}
    s = load_settings(conn)
    assert not s.active and s.opt_ins == () and s.opted_out == ()
    assert not disable(conn, now=7.0).was_in
    # Not opted in at all: marked out, and said so.
    assert not disable(conn, now=8.0, root="/nope").was_in
    assert load_settings(conn).opted_out == ("/nope",)


def test_urls() -> None:
    assert validate_url(" https://c.example:8443/base/ ") == "https://c.example:8443/base"
    for bad in ("ftp://x", "collector.example", "https://", "https://x/?a=1"):
        with pytest.raises(InputError):
            validate_url(bad)


def test_upload_options(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[sync]\nbatch_size = 50\nbackoff = "2s,1m"\n')
    options = upload_options(config, env={})
    assert (options.batch_size, options.backoff_base, options.backoff_cap) == (50, 2.0, 60.0)
    options = upload_options(config, env={"CAPTURE_SYNC_BACKOFF": "100ms,1s"})
    assert (options.backoff_base, options.backoff_cap) == (0.1, 1.0)
    with pytest.raises(ConfigError):
        upload_options(config, env={"CAPTURE_SYNC_BACKOFF": "1s"})
    with pytest.raises(ConfigError):
        upload_options(config, env={"CAPTURE_SYNC_BATCH": "many"})
