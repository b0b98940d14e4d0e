"""The forge webhooks over real HTTP on SQLite and PostgreSQL: GitHub's and GitLab's example
deliveries, signed with the team's secret, stored once; refused when the signature is wrong;
acknowledged and dropped when the event is not one the collector reads; never another team's."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from tests.collector.conftest import Served
from tests.support.collector_support import collector_env
from tests.support.forge_support import (
    example,
    make_secret,
    post_github,
    post_gitlab,
    stored_deliveries,
)

_teams = itertools.count()

GITHUB = [
    ("pull_request", "github/pull_request.opened"),
    ("pull_request", "github/pull_request.synchronize"),
    ("pull_request", "github/pull_request.closed"),
    ("pull_request_review", "github/pull_request_review.submitted"),
    ("pull_request_review_comment", "github/pull_request_review_comment.created"),
    ("check_suite", "github/check_suite.completed"),
    ("check_run", "github/check_run.completed"),
    ("workflow_run", "github/workflow_run.completed"),
    ("push", "github/push"),
]
GITLAB = [
    ("Merge Request Hook", "gitlab/merge_request.merged"),
    ("Note Hook", "gitlab/note.merge_request"),
    ("Pipeline Hook", "gitlab/pipeline.success"),
    ("Push Hook", "gitlab/push"),
]


def team() -> str:
    return f"forge-{os.getpid()}-{next(_teams)}"


def test_every_github_example_is_stored_once_and_a_replay_changes_nothing(served: Served) -> None:
    t = team()
    secret = make_secret(served.db, t)
    ids = {}
    with httpx.Client(timeout=30) as client:
        for event, name in GITHUB:
            ids[name] = str(uuid.uuid4())
            r = post_github(client, served.url, t, secret, event, example(name), ids[name])
            assert r.status_code == 200, r.text
            assert r.json()["status"] == "stored"
        event, name = GITHUB[3]
        again = post_github(client, served.url, t, secret, event, example(name), ids[name])
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    stored = stored_deliveries(served.db, t)
    assert sorted(d.delivery_id for d in stored) == sorted(ids.values())
    kinds = {d.event: d.facts["kind"] for d in stored}
    assert kinds["pull_request_review"] == "review"
    assert kinds["workflow_run"] == "ci"
    review = next(d for d in stored if d.event == "pull_request_review")
    assert review.facts["state"] == "commented"
    assert review.facts["commit"] == "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
    comment = next(d for d in stored if d.event == "pull_request_review_comment")
    body = example("github/pull_request_review_comment.created")["comment"]["body"]
    assert body not in repr(comment.facts)  # a comment's words are never kept


def test_gitlab_examples_are_stored_with_the_teams_token(served: Served) -> None:
    t = team()
    secret = make_secret(served.db, t)
    with httpx.Client(timeout=30) as client:
        for event, name in GITLAB:
            r = post_gitlab(client, served.url, t, secret, event, example(name))
            assert r.status_code == 200, r.text
        wrong = post_gitlab(
            client, served.url, t, secret + "x", *GITLAB[0][:1], example(GITLAB[0][1])
        )
    assert wrong.status_code == 401
    stored = {d.event: d.facts for d in stored_deliveries(served.db, t)}
    assert stored["Merge Request Hook"]["merged"] is True
    assert stored["Pipeline Hook"]["conclusion"] == "success"
    assert stored["Note Hook"]["path"] == "README.md"
    assert [c["files"] for c in stored["Push Hook"]["commits"]][0] == [
        "CHANGELOG",
        "app/controller/application.rb",
    ]
    assert "needs work" not in repr(stored["Note Hook"])


def test_a_bad_signature_is_401_and_nothing_is_stored(served: Served) -> None:
    t = team()
    secret = make_secret(served.db, t)
    payload = example("github/pull_request.opened")
    with httpx.Client(timeout=30) as client:
        bad = post_github(client, served.url, t, secret, "pull_request", payload, sign_with="x")
        unsigned = client.post(
            f"{served.url}/webhooks/github",
            params={"team": t},
            content=b"{}",
            headers={"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d1"},
        )
        no_secret = post_github(client, served.url, team(), secret, "pull_request", payload)
    assert bad.status_code == 401
    assert bad.json()["error"] == "bad_signature"
    assert unsigned.status_code == 401
    # a team without a secret looks the same as a wrong signature
    assert no_secret.status_code == 401
    assert no_secret.json() == bad.json()
    assert stored_deliveries(served.db, t) == []


def test_an_unknown_event_is_202_and_dropped(served: Served) -> None:
    t = team()
    secret = make_secret(served.db, t)
    with httpx.Client(timeout=30) as client:
        r = post_github(client, served.url, t, secret, "star", {"action": "created"})
        ping = post_github(client, served.url, t, secret, "ping", {"zen": "Keep it simple."})
        lab = post_gitlab(client, served.url, t, secret, "Issue Hook", {"object_kind": "issue"})
    assert (r.status_code, ping.status_code, lab.status_code) == (202, 202, 202)
    assert r.json()["status"] == "ignored"
    assert stored_deliveries(served.db, t) == []


def test_no_forge_data_crosses_teams(served: Served) -> None:
    """A delivery signed with one team's secret is refused for another; the same delivery id
    for two teams is two deliveries; a bearer token of any scope opens nothing on the webhook
    routes, and webhook secrets open nothing on the /v1 routes."""
    a, b = team(), team()
    secret_a, secret_b = make_secret(served.db, a), make_secret(served.db, b)
    assert secret_a != secret_b
    payload = example("github/pull_request.opened")
    with httpx.Client(timeout=30) as client:
        cross = post_github(client, served.url, b, secret_a, "pull_request", payload, "same")
        assert cross.status_code == 401
        assert (
            post_github(client, served.url, a, secret_a, "pull_request", payload, "same").json()[
                "status"
            ]
            == "stored"
        )
        assert (
            post_github(client, served.url, b, secret_b, "pull_request", payload, "same").json()[
                "status"
            ]
            == "stored"
        )
        export_b = served.token(b, "export")
        forged = post_github(
            client, served.url, a, export_b, "pull_request", payload, "other", sign_with=export_b
        )
        assert forged.status_code == 401
        as_token = client.get(
            f"{served.url}/v1/teams/{a}/export", headers={"Authorization": f"Bearer {secret_a}"}
        )
        assert as_token.status_code == 401
        odd_team = post_github(client, served.url, "../" + a, secret_a, "pull_request", payload)
        assert odd_team.status_code == 401
    assert [d.delivery_id for d in stored_deliveries(served.db, a)] == ["same"]
    assert [d.delivery_id for d in stored_deliveries(served.db, b)] == ["same"]


def test_the_cli_creates_a_secret_once_and_prints_it_last(db_url: str, tmp_path: Path) -> None:
    env = collector_env(tmp_path / "home")

    def run(team_name: str) -> subprocess.CompletedProcess[str]:
        command = ["collector", "webhook-secret", "--team", team_name, "--db", db_url]
        return subprocess.run(
            [sys.executable, "-m", "capture", *command],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    first = run("t1").stdout.strip().splitlines()[-1]
    assert first.startswith("whsec_")
    assert run("t1").stdout.strip().splitlines()[-1] == first
    assert run("t2").stdout.strip().splitlines()[-1] != first
    bad = run("a/b")
    assert bad.returncode != 0
    assert "not a team name" in bad.stderr
