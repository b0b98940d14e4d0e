"""`capture collector ...` as a user runs it: tokens made, listed and revoked from the command
line take effect on a running collector; bad input is one line and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.collector.conftest import StartCollector
from tests.conftest import RunCapture
from tests.support.collector_support import free_port, item, make_episode, post_batch


def test_tokens_from_the_command_line_on_a_running_collector(
    db_url: str, run_capture: RunCapture, start_collector: StartCollector
) -> None:
    collector = start_collector(db_url, "--rate", "1000", "--burst", "1000")
    created = run_capture(
        "collector",
        "token",
        "create",
        "--db",
        db_url,
        "--team",
        "web",
        "--scope",
        "ingest",
        "--name",
        "ana's laptop",
    )
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("cct_") and "shown only this once" in created.stderr
    read = run_capture(
        "collector",
        "token",
        "create",
        "--db",
        db_url,
        "--team",
        "web",
        "--scope",
        "read",
        "--json",
    )
    read_token = json.loads(read.stdout)["token"]

    listing = run_capture("collector", "token", "list", "--db", db_url, "--json", check=True)
    tokens = json.loads(listing.stdout)
    assert [(t["team"], t["scope"], t["revoked_at"]) for t in tokens] == [
        ("web", "ingest", None),
        ("web", "read", None),
    ]
    assert token not in listing.stdout  # only ids, never secrets
    ingest_id = tokens[0]["id"]
    table = run_capture("collector", "token", "list", "--db", db_url, check=True)
    assert ingest_id in table.stdout and "ana's laptop" in table.stdout

    with httpx.Client(timeout=30) as client:
        r = post_batch(client, collector.url, token, [item(make_episode("cli1"))])
        assert r.json()["results"][0]["status"] == "accepted"
        revoked = run_capture("collector", "token", "revoke", ingest_id, "--db", db_url)
        assert revoked.returncode == 0 and "revoked" in revoked.stdout
        r = post_batch(client, collector.url, token, [item(make_episode("cli2"))])
        assert r.status_code == 401
        r = client.get(
            f"{collector.url}/v1/teams/web/report",
            headers={"Authorization": f"Bearer {read_token}"},
        )
        assert r.status_code == 200 and r.json()["team"] == "web"
    again = run_capture("collector", "token", "revoke", ingest_id, "--db", db_url)
    assert again.returncode != 0 and again.stderr.startswith("capture: error: ")
    assert "already revoked" in again.stderr


def test_a_token_beyond_its_rate_gets_429_with_retry_after(
    sqlite_url: str, run_capture: RunCapture, start_collector: StartCollector
) -> None:
    collector = start_collector(sqlite_url, "--rate", "0.5", "--burst", "2")
    token = run_capture(
        "collector",
        "token",
        "create",
        "--db",
        sqlite_url,
        "--team",
        "t",
        "--scope",
        "read",
        check=True,
    ).stdout.strip()
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(timeout=30) as client:
        codes = [client.get(f"{collector.url}/v1/teams/t/report", headers=auth) for _ in range(4)]
    assert [r.status_code for r in codes] == [200, 200, 429, 429]
    assert codes[2].json()["error"] == "rate_limited"
    assert int(codes[2].headers["retry-after"]) >= 1


def test_bad_input_is_one_line(run_capture: RunCapture, tmp_path: Path) -> None:
    cases = [
        (("collector", "token", "create", "--team", "a b", "--scope", "read"), "not a team name"),
        (("collector", "token", "list", "--db", "mysql://x/y"), "unsupported database URL"),
        (
            (
                "collector",
                "token",
                "list",
                "--db",
                f"postgresql://nobody@127.0.0.1:{free_port()}/x",
            ),
            "cannot open the collector database",
        ),
        (("collector", "serve", "--db", "mysql://x/y", "--port", "0"), "unsupported database URL"),
        (("collector", "token", "revoke", "nosuchid"), "no such token"),
    ]
    for args, message in cases:
        result = run_capture(*args)
        assert result.returncode != 0, args
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("capture: error: "), result.stderr
        assert message in lines[0]
    # The default database lives in the data directory of CAPTURE_HOME.
    made = run_capture("collector", "token", "create", "--team", "x", "--scope", "read")
    assert made.returncode == 0
    assert (tmp_path / "capture-home" / "data" / "collector.db").exists()
