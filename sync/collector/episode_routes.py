"""`POST /v1/episodes`: a batch of episodes uploaded, each answered accepted, duplicate or
rejected.

The body is read under the size cap on the loop; decoding, checking and storing the batch run
in the thread pool, so the loop keeps answering health checks while a large batch is parsed.

No `from __future__ import annotations` here: FastAPI reads the route's annotations at run
time, and they name the authentication dependency this module is given.
"""

import re
from collections.abc import Callable
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from sync.collector import wire
from sync.collector.admission import Admission
from sync.collector.backend import Storage
from sync.collector.bounds import BodyStream, oversized_field
from sync.collector.errors import ApiError
from sync.collector.http import UNAVAILABLE, error_responses, read_body_into, unavailable
from sync.collector.ingest import EpisodeRow, Rejection, check_batch, parse_json, prepare
from sync.collector.limits import Limits
from sync.collector.tokens import TokenRecord, authorize
from sync.collector.validation import compile_schema

__all__ = ["CONTRIBUTOR_HEADER", "episodes_router"]

CONTRIBUTOR_HEADER = "X-Capture-Contributor"
_CONTRIBUTOR = re.compile(wire.CONTRIBUTOR_PATTERN.rstrip("$") + r"\Z", re.ASCII)


def episodes_router(
    storage: Storage,
    limits: Limits,
    clock: Callable[[], float],
    authenticate: Callable[..., Any],
) -> APIRouter:
    router = APIRouter()
    validate_batch = compile_schema(wire.batch_schema())
    admission = Admission(limits.max_uploads_per_token, limits.max_uploads)

    def process(data: bytes, team: str, contributor: str | None) -> list[dict[str, Any]]:
        batch = parse_json(data)
        del data
        oversized = oversized_field(batch, limits.max_field_bytes)
        if oversized:
            raise ApiError(
                413,
                "field_too_large",
                f"{oversized} holds more than {limits.max_field_bytes} bytes, the most this "
                "collector takes in one text field",
                field=oversized,
            )
        items = check_batch(batch, validate_batch, limits.max_batch)
        now = clock()
        prepared = [
            prepare(item, contributor=contributor, received_at=now, max_level=limits.max_level)
            for item in items
        ]
        rows = [p for p in prepared if isinstance(p, EpisodeRow)]
        inserted = storage.store(team, rows) if rows else set()
        results: list[dict[str, Any]] = []
        claimed: set[tuple[str, int]] = set()
        for p in prepared:
            if isinstance(p, Rejection):
                results.append(
                    {
                        "id": p.episode_id,
                        "revision": p.revision,
                        "status": "rejected",
                        "error": p.error,
                    }
                )
                continue
            fresh = p.key in inserted and p.key not in claimed
            claimed.add(p.key)
            results.append(
                {
                    "id": p.episode_id,
                    "revision": p.revision,
                    "status": "accepted" if fresh else "duplicate",
                }
            )
        return results

    @router.post(
        "/v1/episodes",
        summary="Upload a batch of episodes (gzip'd JSON); idempotent per (id, revision)",
        description=(
            "Send `Content-Type: application/json`, preferably with `Content-Encoding: gzip`. "
            "The team is the token's. Each episode is answered `accepted` (stored now), "
            "`duplicate` (this id and revision were stored before: retrying is safe) or "
            "`rejected` (well-formed but refused, with the reason in `error`: e.g. `episode.id` "
            "differs from `id`, an unsupported `episode.schema`, code in a `metrics` upload). "
            "A body that breaks the schema is refused whole (422, naming the field). A body "
            "over the collector's size limit, or a batch of more episodes than its `max_batch` "
            "(1000 by default; see /v1/health), or with a text field over the collector's field "
            "limit (2 MiB by default), is refused whole with 413 (`body_too_large`, "
            "`batch_too_large`, `field_too_large` naming the field): split it or leave the "
            "episode out. Each token has a few uploads worked on at once; more wait their turn "
            "(429 after 30 s)."
        ),
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": wire.batch_schema(),
                        "example": wire.BATCH_EXAMPLE,
                    }
                },
            },
            "parameters": [
                {
                    "name": CONTRIBUTOR_HEADER,
                    "in": "header",
                    "required": False,
                    "description": "The uploader's salted contributor hash (counts distinct "
                    "contributors for the report's privacy threshold).",
                    "schema": {"type": "string", "pattern": wire.CONTRIBUTOR_PATTERN},
                }
            ],
        },
        responses={
            200: {
                "description": "One result per episode, in the order sent.",
                "content": {"application/json": {"schema": wire.RESULTS_SCHEMA}},
            },
            **error_responses(400, 401, 403, 413, 415, 422, 429, 503),
        },
    )
    async def upload(
        request: Request, token: Annotated[TokenRecord, Depends(authenticate)]
    ) -> Response:
        team = authorize(token, "ingest")
        contributor = request.headers.get(CONTRIBUTOR_HEADER)
        if contributor is not None and not _CONTRIBUTOR.match(contributor):
            raise ApiError(
                422,
                "invalid",
                f"{CONTRIBUTOR_HEADER}: does not match {wire.CONTRIBUTOR_PATTERN}",
                field=CONTRIBUTOR_HEADER,
            )
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise ApiError(415, "unsupported_media_type", "send Content-Type: application/json")
        body = BodyStream(request.headers.get("content-encoding"), limits.max_decoded_bytes)
        async with admission.slot(token.id):
            await read_body_into(request, limits.max_body_bytes, body.feed, limits.body_timeout_s)
            try:
                results = await run_in_threadpool(process, body.finish(), team, contributor)
            except UNAVAILABLE as exc:
                raise unavailable(exc) from None
        return Response(orjson.dumps({"results": results}), media_type="application/json")

    return router
