"""`POST /webhooks/github` and `POST /webhooks/gitlab`: a forge's deliveries for one team.

The team is the `team` query parameter (`/webhooks/github?team=TEAM`). These paths take no
bearer token: a delivery proves itself with the team's webhook secret (GitHub's HMAC signature,
GitLab's token header). An unknown team, a team without a secret and a wrong signature all
answer the same 401, so the routes say nothing of which teams exist. A kept event is stored
once per delivery id (200, `stored` or `duplicate`); any other event is 202 and dropped.

No `from __future__ import annotations` here: FastAPI reads the routes' annotations at run
time.
"""

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from sync.collector import wire
from sync.collector.backend import Storage
from sync.collector.errors import ApiError
from sync.collector.forge import (
    Delivery,
    github_facts,
    gitlab_facts,
    verify_github,
    verify_gitlab,
)
from sync.collector.http import call_storage, read_body
from sync.collector.limits import Limits

__all__ = ["WEBHOOK_PATHS", "webhooks_router"]

#: Answered without a bearer token (the secret is checked here instead).
WEBHOOK_PATHS = frozenset({"/webhooks/github", "/webhooks/gitlab"})

_TEAM = re.compile(wire.TEAM_PATTERN.rstrip("$") + r"\Z", re.ASCII)
_DELIVERY_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}\Z", re.ASCII)

Team = Annotated[str, Query(description="The team the deliveries are for")]


def _responses() -> dict[int | str, dict[str, Any]]:
    error = {"application/json": {"schema": wire.ERROR_SCHEMA}}
    return {
        202: {"description": "An event the collector does not read: acknowledged, dropped."},
        400: {"description": "The body is not JSON; nothing was stored.", "content": error},
        401: {
            "description": "The signature or token does not match the team's webhook secret "
            "(or the team has none); nothing was stored.",
            "content": error,
        },
        413: {"description": "The body is over the collector's limit.", "content": error},
        503: {"description": "The database is unavailable; retry later.", "content": error},
    }


def _refused() -> ApiError:
    return ApiError(401, "bad_signature", "the signature or token does not match the team's secret")


def webhooks_router(storage: Storage, limits: Limits, clock: Callable[[], float]) -> APIRouter:
    router = APIRouter()

    async def secret_of(team: str) -> str:
        if not _TEAM.match(team):
            raise _refused()
        secret: str | None = await call_storage(storage.webhook_secret, team)
        if secret is None:
            raise _refused()
        return secret

    async def keep(
        team: str,
        source: str,
        event: str,
        delivery_id: str | None,
        raw: bytes,
        facts_of: Callable[[str, Mapping[str, Any]], dict[str, Any] | None],
    ) -> JSONResponse:
        try:
            payload = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ApiError(400, "invalid_json", "the body is not JSON") from None
        facts = facts_of(event, payload) if isinstance(payload, dict) else None
        if facts is None:
            return JSONResponse({"status": "ignored", "event": event}, status_code=202)
        # Without an id (an old GitLab), the body stands for the delivery: a replay is the same.
        if delivery_id is None or not _DELIVERY_ID.match(delivery_id):
            delivery_id = "sha256:" + hashlib.sha256(raw).hexdigest()
        delivery = Delivery(source, delivery_id, event, clock(), facts)
        new = await call_storage(storage.store_delivery, team, delivery)
        return JSONResponse({"status": "stored" if new else "duplicate", "id": delivery_id})

    @router.post(
        "/webhooks/github",
        summary="A GitHub webhook delivery for a team",
        description="Signed with the team's secret (`capture collector webhook-secret`).",
        status_code=200,
        responses=_responses(),
    )
    async def github(request: Request, team: Team) -> JSONResponse:
        raw = await read_body(request, limits.max_body_bytes)
        secret = await secret_of(team)
        if not verify_github(secret, raw, request.headers.get("x-hub-signature-256")):
            raise _refused()
        event = request.headers.get("x-github-event") or ""
        delivery_id = request.headers.get("x-github-delivery")
        return await keep(team, "github", event, delivery_id, raw, github_facts)

    @router.post(
        "/webhooks/gitlab",
        summary="A GitLab webhook delivery for a team",
        description="Carries the team's secret as `X-Gitlab-Token`.",
        status_code=200,
        responses=_responses(),
    )
    async def gitlab(request: Request, team: Team) -> JSONResponse:
        raw = await read_body(request, limits.max_body_bytes)
        secret = await secret_of(team)
        if not verify_gitlab(secret, request.headers.get("x-gitlab-token")):
            raise _refused()
        event = request.headers.get("x-gitlab-event") or ""
        delivery_id = request.headers.get("x-gitlab-event-uuid") or request.headers.get(
            "idempotency-key"
        )
        return await keep(team, "gitlab", event, delivery_id, raw, gitlab_facts)

    return router
