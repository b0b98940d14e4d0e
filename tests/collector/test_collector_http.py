"""The collector over real HTTP, on SQLite and on a real PostgreSQL: what an uploader and a team
see. Each test uses teams of its own on a shared collector process."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import os
from typing import Any

import httpx
import pytest

from tests.collector.conftest import Served
from tests.support.collector_support import (
    batch_body,
    item,
    make_episode,
    post_batch,
    upload_headers,
)

_teams = itertools.count()


def team() -> str:
    return f"team-{os.getpid()}-{next(_teams)}"


def export_lines(served: Served, team_name: str, token: str | None = None) -> list[dict[str, Any]]:
    token = token or served.token(team_name, "export")
    r = httpx.get(
        f"{served.url}/v1/teams/{team_name}/export",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in r.text.splitlines()]


def episodes(prefix: str, n: int, level: str = "redacted") -> list[dict[str, Any]]:
    return [item(make_episode(f"{prefix}{i:04d}", level=level), level=level) for i in range(n)]


def test_upload_is_idempotent_per_id_and_revision(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    batch = episodes("e", 20)
    with httpx.Client(timeout=30) as client:
        first = post_batch(client, served.url, ingest, batch)
        assert first.status_code == 200, first.text
        assert [r["status"] for r in first.json()["results"]] == ["accepted"] * 20
        assert [r["id"] for r in first.json()["results"]] == [b["id"] for b in batch]

        again = post_batch(client, served.url, ingest, batch)
        assert [r["status"] for r in again.json()["results"]] == ["duplicate"] * 20

        changed = [dict(b, revision=2, idempotency_key=f"{b['id']}:2") for b in batch[:3]]
        for c in changed:
            c["episode"] = {**c["episode"], "test_runs": []}
        # The same episode twice in one batch: stored once.
        newer = post_batch(client, served.url, ingest, [*changed, changed[0]])
        assert [r["status"] for r in newer.json()["results"]] == [
            "accepted",
            "accepted",
            "accepted",
            "duplicate",
        ]
        older = post_batch(client, served.url, ingest, batch[:1])
        assert older.json()["results"][0]["status"] == "duplicate"

    lines = export_lines(served, t)
    assert len(lines) == 20
    by_id = {line["id"]: line for line in lines}
    for b in batch[3:]:
        assert by_id[b["id"]]["revision"] == 1
        assert by_id[b["id"]]["episode"] == b["episode"]
        assert by_id[b["id"]]["contributor"] == "c0"
    for c in changed:
        assert by_id[c["id"]]["revision"] == 2
        assert by_id[c["id"]]["episode"]["test_runs"] == []


def test_anonymized_episodes_are_accepted_and_policy_breaches_rejected(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    metrics = make_episode("anon1", level="metrics")
    # What the metrics level leaves: no code fields at all, hashed paths, unknown new fields.
    for p in metrics["proposals"]:
        for h in p["hunks"]:
            del h["old_text"], h["new_text"]
        p["file"] = "h:5f1c9e2a/h:77ab03de.py"
        p["language"] = "python"
    del metrics["prompt"], metrics["workspace"], metrics["session_id"]
    metrics["anonymizer"] = {"version": 1}
    leaky = make_episode("leak1", level="redacted")  # carries code, but claims "metrics"
    mismatched = make_episode("other")
    future = dict(make_episode("future1"), schema="agent-capture/episode@2")
    batch = [
        item(metrics, level="metrics"),
        item(leaky, level="metrics"),
        {**item(mismatched), "id": "claimed"},
        item(future),
        {**item(make_episode("badkey")), "idempotency_key": "badkey:7"},
    ]
    with httpx.Client(timeout=30) as client:
        r = post_batch(client, served.url, ingest, batch)
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [x["status"] for x in results] == ["accepted"] + ["rejected"] * 4
    assert "episode.prompt" in results[1]["error"]
    assert "episode.id" in results[2]["error"]
    assert "episode@2" in results[3]["error"]
    assert "idempotency_key" in results[4]["error"]
    assert [line["id"] for line in export_lines(served, t)] == ["anon1"]


def test_no_token_is_401_and_revoked_or_unknown_tokens_too(served: Served) -> None:
    t = team()
    body = batch_body(episodes("x", 2))
    with httpx.Client(timeout=30) as client:
        for headers in (
            upload_headers(None),
            upload_headers("cct_000000000000_" + "A" * 43),
            {**upload_headers(None), "Authorization": "Basic dXNlcjpwYXNz"},
        ):
            r = client.post(f"{served.url}/v1/episodes", content=body, headers=headers)
            assert r.status_code == 401, r.text
            assert r.headers["www-authenticate"] == "Bearer"
            assert r.json()["error"] == "unauthorized"
        r = client.get(f"{served.url}/v1/teams/{t}/report")
        assert r.status_code == 401
        r = client.get(f"{served.url}/v1/teams/{t}/export")
        assert r.status_code == 401
    assert export_lines(served, t) == []


def test_another_teams_token_is_403_and_sees_nothing_of_it(served: Served) -> None:
    alpha, beta = team(), team()
    alpha_ingest = served.token(alpha, "ingest")
    with httpx.Client(timeout=30) as client:
        for c in range(6):
            r = post_batch(
                client, served.url, alpha_ingest, episodes(f"al{c}-", 3), contributor=f"c{c}"
            )
            assert r.status_code == 200
        beta_read = served.token(beta, "read")
        beta_export = served.token(beta, "export")
        alpha_read = served.token(alpha, "read")
        for token in (beta_read, beta_export):
            auth = {"Authorization": f"Bearer {token}"}
            for path in ("report", "report?format=html", "export", "export?format=parquet"):
                r = client.get(f"{served.url}/v1/teams/{alpha}/{path}", headers=auth)
                assert r.status_code == 403, (path, r.text)
                assert r.json()["error"] == "forbidden"
                assert "al0-" not in r.text and "claude" not in r.text
                # with a trailing slash: no redirect to the route, not a 2xx either
                route, _, query = path.partition("?")
                slashed = f"{route}/?{query}" if query else f"{route}/"
                r = client.get(f"{served.url}/v1/teams/{alpha}/{slashed}", headers=auth)
                assert r.status_code in (401, 403, 404), (path, r.status_code)
                assert "location" not in r.headers and "al0-" not in r.text
        for path in ("/v1/episodes/", f"/v1/teams/{alpha}/report/"):
            r = client.get(f"{served.url}{path}", headers={"Authorization": "Bearer nope"})
            assert r.status_code == 401, (path, r.status_code)
        # beta's own views hold nothing of alpha's.
        r = client.get(
            f"{served.url}/v1/teams/{beta}/report",
            headers={"Authorization": f"Bearer {beta_read}"},
        )
        assert r.status_code == 200
        report = r.json()
        assert report["total"]["suppressed"] is True
        assert report["by_agent"] == report["by_model"] == report["by_week"] == []
        assert export_lines(served, beta, beta_export) == []
        # Scopes: a read token cannot export, an ingest token cannot read.
        r = client.get(
            f"{served.url}/v1/teams/{alpha}/export",
            headers={"Authorization": f"Bearer {alpha_read}"},
        )
        assert r.status_code == 403
        r = client.get(
            f"{served.url}/v1/teams/{alpha}/report",
            headers={"Authorization": f"Bearer {alpha_ingest}"},
        )
        assert r.status_code == 403
        # The team comes from the token: beta's ingest token writes into beta only.
        r = post_batch(client, served.url, served.token(beta, "ingest"), episodes("al0-", 1))
        assert r.json()["results"][0]["status"] == "accepted"  # not a duplicate of alpha's
        r = client.get(
            f"{served.url}/v1/teams/{alpha}/report",
            headers={"Authorization": f"Bearer {alpha_read}"},
        )
        assert r.json()["total"]["episodes"] == 18


def test_a_50_mb_body_is_413_and_nothing_is_stored(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    huge = episodes("big", 1)
    huge[0]["episode"]["prompt"] = "x" * (50 * 1024 * 1024)
    raw = json.dumps({"episodes": huge}).encode()
    assert len(raw) > 50 * 1024 * 1024
    with httpx.Client(timeout=60) as client:
        r = client.post(
            f"{served.url}/v1/episodes", content=raw, headers=upload_headers(ingest, gz=False)
        )
        assert r.status_code == 413, r.text
        assert r.json()["error"] == "body_too_large"
        # The same as a small gzip body that inflates past the limit.
        r = client.post(
            f"{served.url}/v1/episodes",
            content=gzip.compress(raw + b" " * (30 * 1024 * 1024), compresslevel=1),
            headers=upload_headers(ingest),
        )
        assert r.status_code == 413, r.text
        # Sent in chunks, without a Content-Length.
        chunks = (raw[i : i + 1 << 20] for i in range(0, len(raw), 1 << 20))
        r = client.post(
            f"{served.url}/v1/episodes", content=chunks, headers=upload_headers(ingest, gz=False)
        )
        assert r.status_code == 413, r.text
        too_many = client.post(
            f"{served.url}/v1/episodes",
            content=batch_body(episodes("many", 1001, level="metrics")),
            headers=upload_headers(ingest),
        )
        assert too_many.status_code == 413
        assert too_many.json()["error"] == "batch_too_large"
        assert client.get(f"{served.url}/v1/health").status_code == 200
    assert export_lines(served, t) == []


@pytest.mark.parametrize(
    ("mutate", "status", "field"),
    [
        (lambda b: b["episodes"][1].update(revision="2"), 422, "episodes[1].revision"),
        (lambda b: b["episodes"][1].update(revision=0), 422, "episodes[1].revision"),
        (lambda b: b["episodes"][0].update(level="secret"), 422, "episodes[0].level"),
        (
            lambda b: b["episodes"][1]["episode"]["proposals"][0].update(similarity="high"),
            422,
            "episodes[1].episode.proposals[0].similarity",
        ),
        (
            lambda b: b["episodes"][0]["episode"]["test_runs"].append({"passed": -1}),
            422,
            "episodes[0].episode.test_runs[",
        ),
        (
            lambda b: b["episodes"][1]["episode"].pop("proposals"),
            422,
            "episodes[1].episode.proposals",
        ),
        (lambda b: b.update(extra=1), 422, "extra"),
        (lambda b: b.pop("episodes"), 422, "episodes"),
    ],
)
def test_a_wrong_type_is_422_naming_the_field_and_nothing_is_stored(
    served: Served, mutate: Any, status: int, field: str
) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    body = {"episodes": episodes("w", 2)}
    body["episodes"][0]["episode"]["test_runs"] = []
    mutate(body)
    r = httpx.post(
        f"{served.url}/v1/episodes",
        content=gzip.compress(json.dumps(body).encode()),
        headers=upload_headers(ingest),
        timeout=30,
    )
    assert r.status_code == status, r.text
    assert r.json()["field"].startswith(field), r.json()
    assert field in r.json()["message"]
    assert export_lines(served, t) == []


def test_broken_gzip_or_json_is_400_and_nothing_is_stored(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    good = batch_body(episodes("g", 3))
    cases = [
        (good[: len(good) // 2], upload_headers(ingest), 400, "bad_gzip"),  # truncated gzip
        (b"\x1f\x8b\x08garbage", upload_headers(ingest), 400, "bad_gzip"),
        (gzip.compress(b'{"episodes": [1, 2'), upload_headers(ingest), 400, "bad_json"),
        (b'{"episodes": NaN}', upload_headers(ingest, gz=False), 400, "bad_json"),
        (gzip.compress(b"\xff\xfe not utf-8"), upload_headers(ingest), 400, "bad_json"),
        (gzip.compress(b"[]"), upload_headers(ingest), 422, "invalid"),
        (good, {**upload_headers(ingest), "Content-Encoding": "br"}, 415, "unsupported_encoding"),
        (
            good,
            {**upload_headers(ingest), "Content-Type": "text/plain"},
            415,
            "unsupported_media_type",
        ),
    ]
    with httpx.Client(timeout=30) as client:
        for body, headers, status, code in cases:
            r = client.post(f"{served.url}/v1/episodes", content=body, headers=headers)
            assert (r.status_code, r.json()["error"]) == (status, code), r.text
        bad = client.post(
            f"{served.url}/v1/episodes",
            content=good,
            headers={**upload_headers(ingest), "X-Capture-Contributor": "has space"},
        )
        assert bad.status_code == 422 and bad.json()["field"] == "X-Capture-Contributor"
    assert export_lines(served, t) == []


def test_report_hides_groups_of_fewer_than_five_contributors(served: Served) -> None:
    t = team()
    ingest = served.token(t, "ingest")
    week = 1_764_547_200  # Monday 2025-12-01 00:00 UTC
    with httpx.Client(timeout=30) as client:
        # Five contributors use claude-code; only two use codex.
        for c in range(5):
            eps = [
                item(
                    make_episode(
                        f"r{c}-{i}",
                        agent="claude-code",
                        model="opus",
                        started_at=week + 3600 * (c + i),
                        proposals=2,
                    )
                )
                for i in range(4)
            ]
            assert post_batch(client, served.url, ingest, eps, contributor=f"dev{c}").is_success
        for c in range(2):
            eps = [
                item(
                    make_episode(f"x{c}", agent="codex", model="gpt-5", started_at=week + 8 * 86400)
                )
            ]
            assert post_batch(client, served.url, ingest, eps, contributor=f"dev{c}").is_success
        auth = {"Authorization": f"Bearer {served.token(t, 'read')}"}
        r = client.get(f"{served.url}/v1/teams/{t}/report", headers=auth)
        assert r.status_code == 200, r.text
        report = r.json()
        html = client.get(f"{served.url}/v1/teams/{t}/report?format=html", headers=auth)
        since = client.get(
            f"{served.url}/v1/teams/{t}/report",
            params={"since": "2025-12-08T00:00:00Z"},
            headers=auth,
        )
        bad_since = client.get(
            f"{served.url}/v1/teams/{t}/report", params={"since": "last week"}, headers=auth
        )
    total = report["total"]
    assert total["suppressed"] is False
    assert total["contributors"] == 5
    assert total["episodes"] == 22
    assert total["proposals"]["total"] >= 40
    agents = {g["key"]: g for g in report["by_agent"]}
    assert agents["claude-code"]["suppressed"] is False
    assert agents["claude-code"]["episodes"] == 20
    assert agents["claude-code"]["proposals"]["total"] == 40
    assert agents["codex"] == {
        "key": "codex",
        "suppressed": True,
        "reason": "fewer than 5 contributors",
    }
    models = {g["key"]: g for g in report["by_model"]}
    assert models["gpt-5"]["suppressed"] is True and "episodes" not in models["gpt-5"]
    weeks = {g["key"]: g for g in report["by_week"]}
    assert weeks["2025-12-01"]["suppressed"] is False
    assert weeks["2025-12-08"]["suppressed"] is True
    kept = total["rates"]["kept"]
    assert kept["denominator"] == sum(
        total["outcomes"][o] for o in ("kept", "edited", "undone", "lost")
    )
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "fewer than 5 contributors" in html.text and "claude-code" in html.text
    assert since.json()["total"]["suppressed"] is True  # only codex's two contributors remain
    assert bad_since.status_code == 422 and bad_since.json()["field"] == "since"


def test_parquet_export_holds_the_same_episodes(served: Served) -> None:
    import pyarrow.parquet as pq  # in the test extra, so never skipped

    t = team()
    ingest = served.token(t, "ingest")
    batch = episodes("pq", 30)
    assert post_batch(httpx.Client(timeout=30), served.url, ingest, batch).is_success
    token = served.token(t, "export")
    r = httpx.get(
        f"{served.url}/v1/teams/{t}/export",
        params={"format": "parquet"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    table = pq.read_table(io.BytesIO(r.content))
    assert table.num_rows == 30
    rows = table.to_pylist()
    assert sorted(row["id"] for row in rows) == sorted(b["id"] for b in batch)
    sent = {b["id"]: b["episode"] for b in batch}
    for row in rows:
        assert json.loads(row["episode"]) == sent[row["id"]]
        assert row["level"] == "redacted" and row["revision"] == 1


def test_health_and_openapi(served: Served) -> None:
    health = httpx.get(f"{served.url}/v1/health").json()
    assert health["status"] == "ok"
    assert health["database"] in ("sqlite", "postgresql")
    assert health["limits"]["max_batch"] == 1000
    spec = httpx.get(f"{served.url}/openapi.json").json()
    post = spec["paths"]["/v1/episodes"]["post"]
    assert set(post["responses"]) >= {"200", "400", "401", "403", "413", "422", "429"}
    schema = post["requestBody"]["content"]["application/json"]["schema"]
    assert schema["properties"]["episodes"]["items"]["required"] == [
        "id",
        "revision",
        "idempotency_key",
        "level",
        "episode",
    ]
