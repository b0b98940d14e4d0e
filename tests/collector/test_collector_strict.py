"""A stricter collector: a multi-member gzip body is read whole (or refused, never half read),
the token is checked before any other answer (no redirect, no 404 without one), and tokens may
expire. Over real HTTP on SQLite and PostgreSQL, and the decisions as plain functions."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from sync.collector.app import create_app
from sync.collector.errors import ApiError
from sync.collector.ingest import MAX_GZIP_MEMBERS, decode_body
from sync.collector.storage_sqlite import SqliteStorage
from sync.collector.tokens import live_token, new_token, parse_expiry
from tests.collector.conftest import Served
from tests.conftest import RunCapture
from tests.support.collector_support import item, make_episode, stored_keys, upload_headers

_teams = itertools.count()


def team() -> str:
    return f"strict-{os.getpid()}-{next(_teams)}"


def members(*parts: bytes) -> bytes:
    """One gzip body of several members, as `cat a.gz b.gz` makes it."""
    return b"".join(gzip.compress(p) for p in parts)


def split_batch(prefix: str, n: int, cuts: int) -> tuple[bytes, list[bytes]]:
    """A batch's JSON, and the same bytes cut into `cuts` pieces (anywhere, mid-token too)."""
    raw = json.dumps({"episodes": [item(make_episode(f"{prefix}{i}")) for i in range(n)]})
    data = raw.encode()
    step = len(data) // cuts + 1
    return data, [data[i : i + step] for i in range(0, len(data), step)]


# -- the decisions ---------------------------------------------------------------------------


def test_every_member_of_a_gzip_body_is_read() -> None:
    data, pieces = split_batch("m", 5, 3)
    assert len(pieces) == 3
    assert decode_body(members(*pieces), "gzip", 10**6) == data
    assert decode_body(members(b"", data, b""), "gzip", 10**6) == data  # empty members too
    assert decode_body(gzip.compress(data), "gzip", 10**6) == data


def test_a_multi_member_body_is_refused_whole_when_it_cannot_be_read_whole() -> None:
    data, pieces = split_batch("r", 5, 2)
    cases = [
        (gzip.compress(pieces[0]) + b"not gzip", 400, "after member 1"),
        (gzip.compress(pieces[0]) + b"\0" * 8, 400, "after member 1"),  # zero padding
        (members(*pieces)[:-3], 400, "truncated"),  # the last member cut short
        (members(*([b"{}"] * (MAX_GZIP_MEMBERS + 1))), 400, "gzip members"),
    ]
    for body, status, words in cases:
        with pytest.raises(ApiError) as info:
            decode_body(body, "gzip", 10**6)
        assert info.value.status == status and words in info.value.message, body[:20]
    # The decompressed-size limit holds for all members together, each one under it.
    with pytest.raises(ApiError) as info:
        decode_body(members(b" " * 600, b" " * 600), "gzip", 1000)
    assert info.value.status == 413
    assert decode_body(members(b" " * 500, b" " * 500), "gzip", 1000) == b" " * 1000


def test_lifetimes_and_expiry() -> None:
    assert [parse_expiry(t) for t in ("12h", "90d", "4w", " 1D ")] == [
        12 * 3600.0, 90 * 86400.0, 28 * 86400.0, 86400.0,
    ]  # fmt: skip
    for bad in ("", "90", "0d", "-1d", "1.5d", "3m", "10y", "d", "1dd", "9999999h"):
        with pytest.raises(ValueError, match="not a lifetime"):
            parse_expiry(bad)
    _, record = new_token("web", "ingest", None, 1000.0, 3600.0)
    assert record.expires_at == 4600.0
    assert live_token(record, 4599.9) is record
    with pytest.raises(ApiError) as info:
        live_token(record, 4600.0)
    assert info.value.status == 401 and "expired" in info.value.message
    _, forever = new_token("web", "ingest", None, 1000.0)
    assert forever.expires_at is None and live_token(forever, 1e12) is forever


@contextmanager
def serving(storage: Any, clock: Callable[[], float]) -> Iterator[str]:
    """The collector's app with an injected clock, served by uvicorn on a loopback port."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(
        uvicorn.Config(create_app(storage, clock=clock), log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_expiry_goes_by_the_collectors_clock(tmp_path: Path) -> None:
    """create_app(clock=...): the collector's own notion of now decides, not the client's."""
    storage = SqliteStorage(tmp_path / "c.db")
    storage.migrate()
    token, record = new_token("web", "read", None, 1_000_000.0, parse_expiry("1h"))
    storage.add_token(record)
    now = [1_000_000.0 + 3599]
    headers = {"Authorization": f"Bearer {token}"}
    with serving(storage, lambda: now[0]) as url, httpx.Client(timeout=30) as client:
        assert client.get(f"{url}/v1/teams/web/report", headers=headers).status_code == 200
        now[0] = 1_000_000.0 + 3600
        r = client.get(f"{url}/v1/teams/web/report", headers=headers)
        assert r.status_code == 401 and "expired" in r.json()["message"]
    storage.close()


# -- over real HTTP ----------------------------------------------------------------------------


def test_a_multi_member_upload_stores_every_episode(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    _, pieces = split_batch(f"{t}-e", 6, 4)
    r = httpx.post(f"{served.url}/v1/episodes", content=members(*pieces),
                   headers=upload_headers(ingest), timeout=30)  # fmt: skip
    assert r.status_code == 200, r.text
    assert [x["status"] for x in r.json()["results"]] == ["accepted"] * 6
    assert set(stored_keys(served.db, t)) == {(f"{t}-e{i}", 1) for i in range(6)}


def test_a_multi_member_upload_that_cannot_be_read_whole_is_refused(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    data, pieces = split_batch(f"{t}-e", 4, 2)
    with httpx.Client(timeout=60) as client:
        # A whole batch in the first member, then something that is not a member: not stored.
        r = client.post(f"{served.url}/v1/episodes", content=gzip.compress(data) + b"junk",
                        headers=upload_headers(ingest))  # fmt: skip
        assert (r.status_code, r.json()["error"]) == (400, "bad_gzip"), r.text
        # Members each under the decompressed-size limit (64 MB), together over it.
        padding = b" " * (40 * 1024 * 1024)
        big = gzip.compress(data[:-1] + padding, 1) + gzip.compress(padding + data[-1:], 1)
        r = client.post(f"{served.url}/v1/episodes", content=big, headers=upload_headers(ingest))
        assert (r.status_code, r.json()["error"]) == (413, "body_too_large"), r.text
    assert stored_keys(served.db, t) == {}


def test_the_token_is_checked_before_any_redirect_or_404(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    read = served.token(t, "read")
    body = gzip.compress(json.dumps({"episodes": [item(make_episode(f"{t}-x"))]}).encode())
    bad = "cct_000000000000_" + "A" * 43
    with httpx.Client(timeout=30, follow_redirects=False) as client:
        for token in (None, bad):
            for method, path in (
                ("POST", "/v1/episodes/"),
                ("GET", f"/v1/teams/{t}/report/"),
                ("GET", f"/v1/teams/{t}/export/"),
                ("GET", "/v1/nothing-here"),
                ("GET", "/v1/health/"),
                ("DELETE", "/v1/episodes"),
            ):
                r = client.request(method, f"{served.url}{path}", content=body,
                                   headers=upload_headers(token))  # fmt: skip
                assert r.status_code == 401, (method, path, token, r.status_code)
                assert "location" not in r.headers
                assert r.json()["error"] == "unauthorized"
        # With a valid token the routing answers as before.
        slash = client.post(f"{served.url}/v1/episodes/", content=body,
                            headers=upload_headers(ingest))  # fmt: skip
        assert slash.status_code in (307, 404)
        auth = {"Authorization": f"Bearer {read}"}
        assert client.get(f"{served.url}/v1/nothing-here", headers=auth).status_code == 404
        assert client.get(f"{served.url}/v1/health").status_code == 200
        assert client.get(f"{served.url}/openapi.json").status_code == 200
    assert stored_keys(served.db, t) == {}


def test_an_expired_token_gets_401(served: Served) -> None:
    t = team()
    expired = served.token(t, "ingest", expires_in=-1.0)
    live = served.token(t, "ingest", expires_in=parse_expiry("90d"))
    with httpx.Client(timeout=30) as client:
        for token, episode_id, status in ((expired, f"{t}-old", 401), (live, f"{t}-new", 200)):
            r = client.post(
                f"{served.url}/v1/episodes",
                content=gzip.compress(json.dumps({"episodes": [item(make_episode(episode_id))]})
                                      .encode()),
                headers=upload_headers(token),
            )  # fmt: skip
            assert r.status_code == status, r.text
        r = client.post(f"{served.url}/v1/episodes/", headers=upload_headers(expired))
        assert r.status_code == 401 and "expired" in r.json()["message"]
    assert set(stored_keys(served.db, t)) == {(f"{t}-new", 1)}


def test_token_expiry_from_the_command_line(db_url: str, run_capture: RunCapture) -> None:
    created = run_capture(
        "collector", "token", "create", "--db", db_url, "--team", "web", "--scope", "ingest",
        "--expires", "90d", "--json", check=True,
    )  # fmt: skip
    made = json.loads(created.stdout)
    expires = datetime.strptime(made["expires_at"], "%Y-%m-%d %H:%M:%SZ").replace(tzinfo=UTC)
    assert abs(expires.timestamp() - (time.time() + 90 * 86400)) < 120
    run_capture("collector", "token", "create", "--db", db_url, "--team", "web",
                "--scope", "read", check=True)  # fmt: skip
    listing = json.loads(run_capture("collector", "token", "list", "--db", db_url, "--json",
                                     check=True).stdout)  # fmt: skip
    assert [(r["scope"], r["expires_at"], r["expired"]) for r in listing] == [
        ("ingest", made["expires_at"], False),
        ("read", None, False),
    ]
    table = run_capture("collector", "token", "list", "--db", db_url, check=True).stdout
    lines = table.splitlines()
    assert "EXPIRES" in lines[0]
    assert made["expires_at"] in lines[1] and "never" in lines[2]
    for bad in ("90", "3m", "0d", "soon"):
        r = run_capture("collector", "token", "create", "--db", db_url, "--team", "web",
                        "--scope", "ingest", "--expires", bad)  # fmt: skip
        assert r.returncode == 2, (bad, r.stderr)
        assert r.stderr.strip().splitlines() == [
            f"capture: error: --expires: not a lifetime: {bad!r} (a whole number of hours, "
            "days or weeks: 12h, 90d, 4w)"
        ]
    after = json.loads(run_capture("collector", "token", "list", "--db", db_url, "--json",
                                   check=True).stdout)  # fmt: skip
    assert len(after) == 2  # nothing made by the refused ones
