"""What the forge tests share: the example payloads, a team's webhook secret stored as the CLI
stores it, and deliveries signed and posted the way GitHub and GitLab send them."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from pathlib import Path
from typing import Any

import httpx

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "forge"


def example(name: str) -> dict[str, Any]:
    """A fixture by its path under tests/fixtures/forge, without `.json`."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def make_secret(db: str, team: str) -> str:
    from sync.collector.forge import new_secret
    from sync.collector.storage import open_storage

    storage = open_storage(db)
    try:
        storage.migrate()
        return storage.ensure_webhook_secret(team, new_secret(), 0.0)
    finally:
        storage.close()


def stored_deliveries(db: str, team: str) -> list[Any]:
    from sync.collector.storage import open_storage

    storage = open_storage(db)
    try:
        return list(storage.deliveries(team))
    finally:
        storage.close()


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post_github(
    client: httpx.Client,
    url: str,
    team: str,
    secret: str,
    event: str,
    payload: dict[str, Any],
    delivery: str | None = None,
    *,
    sign_with: str | None = None,
) -> httpx.Response:
    body = json.dumps(payload).encode()
    return client.post(
        f"{url}/webhooks/github",
        params={"team": team},
        content=body,
        headers={
            "Content-Type": "application/json",
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
            "X-Hub-Signature-256": signature(sign_with or secret, body),
        },
    )


def post_gitlab(
    client: httpx.Client,
    url: str,
    team: str,
    token: str,
    event: str,
    payload: dict[str, Any],
    delivery: str | None = None,
) -> httpx.Response:
    return client.post(
        f"{url}/webhooks/gitlab",
        params={"team": team},
        content=json.dumps(payload).encode(),
        headers={
            "Content-Type": "application/json",
            "X-Gitlab-Event": event,
            "X-Gitlab-Event-UUID": delivery or str(uuid.uuid4()),
            "X-Gitlab-Token": token,
        },
    )
