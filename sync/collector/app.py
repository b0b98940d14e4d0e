"""The collector's HTTP service: routes, authentication, limits and the OpenAPI description.

Wiring only: the decisions live in `ingest`, `tokens`, `limits` and `report`, the data in a
`Storage`. Storage calls and the CPU work on a batch run in the thread pool, so the event loop
keeps answering health checks while a large batch is parsed.

No `from __future__ import annotations` here: FastAPI reads the route signatures' annotations at
run time, and those name dependencies defined inside `create_app`.
"""

import logging
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

import orjson
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from capture import __version__
from capture.connection import sqlite3
from sync.collector import wire
from sync.collector.backend import Storage
from sync.collector.errors import ApiError
from sync.collector.export import iso, jsonl_chunks, parquet_available, parquet_chunks
from sync.collector.ingest import (
    EpisodeRow,
    Rejection,
    check_batch,
    decode_body,
    parse_json,
    parse_time,
    prepare,
)
from sync.collector.limits import Limits, RateLimiter
from sync.collector.report import aggregate
from sync.collector.report_html import render_html
from sync.collector.tokens import TokenRecord, authorize, bearer_token, digest, live_token
from sync.collector.validation import compile_schema, field_path

__all__ = ["create_app"]

log = logging.getLogger("capture.collector")

CONTRIBUTOR_HEADER = "X-Capture-Contributor"
# How much of an oversized or refused body is read (and dropped) before answering, so that the
# client, still sending, reads our answer instead of a reset connection.
_DRAIN_CAP = 256 * 1024 * 1024
_BODY_DONE = "capture_body_done"
_CONTRIBUTOR = re.compile(wire.CONTRIBUTOR_PATTERN.rstrip("$") + r"\Z", re.ASCII)
# The only paths answered without a token (exactly these: `/v1/health/` is not one of them).
_PUBLIC_PATHS = frozenset({"/v1/health", "/openapi.json"})
_TOKEN_KEY = "capture_token"


class ReportFormat(StrEnum):
    json = "json"
    html = "html"


class ExportFormat(StrEnum):
    jsonl = "jsonl"
    parquet = "parquet"


def _error_response(
    status: int, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response:
    return JSONResponse(body, status_code=status, headers=headers)


def _unavailable_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [sqlite3.OperationalError]
    try:
        import psycopg
        import psycopg_pool

        errors += [psycopg.OperationalError, psycopg_pool.PoolTimeout]
    except ImportError:  # SQLite-only installation
        pass
    return tuple(errors)


_UNAVAILABLE = _unavailable_errors()


async def _call_storage(func: Callable[..., Any], *args: Any) -> Any:
    try:
        return await run_in_threadpool(func, *args)
    except _UNAVAILABLE as exc:
        log.warning("database unavailable: %s", exc)
        raise ApiError(
            503,
            "unavailable",
            "the database is unavailable; retry later",
            headers={"Retry-After": "5"},
        ) from None


async def _drain(request: Request) -> None:
    """Read and drop what is left of the request body, up to a cap."""
    if request.scope.get(_BODY_DONE) or request.method not in ("POST", "PUT", "PATCH"):
        return
    request.scope[_BODY_DONE] = True
    received = 0
    while received < _DRAIN_CAP:
        message = await request.receive()
        if message["type"] != "http.request":
            return
        received += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _read_body(request: Request, limit: int) -> bytes:
    too_large = ApiError(
        413, "body_too_large", f"the body is larger than {limit} bytes; send smaller batches"
    )
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        await _drain(request)
        raise too_large
    parts: list[bytes] = []
    size = 0
    while True:
        message = await request.receive()
        if message["type"] != "http.request":
            raise ApiError(400, "incomplete_body", "the client went away mid-body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            await _drain(request)
            raise too_large
        parts.append(chunk)
        if not message.get("more_body", False):
            request.scope[_BODY_DONE] = True
            return b"".join(parts)


class _AuthenticateFirst:
    """Checks the bearer token of every request but the public paths before routing, so that
    no answer (a redirect of `/v1/episodes/`, a 404 or 405 naming what exists) reaches a client
    without a valid token. The record is left in the scope for the routes' dependency."""

    def __init__(self, app: Any, identify: Callable[[str | None], Any]) -> None:
        self.app = app
        self.identify = identify

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in _PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        authorization = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), None
        )
        try:
            scope[_TOKEN_KEY] = await self.identify(authorization)
        except ApiError as exc:
            await _drain(Request(scope, receive))
            await _error_response(exc.status, exc.body(), exc.headers)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _time_param(name: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return parse_time(text)
    except ValueError:
        raise ApiError(
            422,
            "invalid",
            f"{name}: not an RFC 3339 date-time (2026-11-30T00:00:00Z)",
            field=name,
        ) from None


def _time_query(description: str) -> Any:
    return Query(description=description, json_schema_extra={"format": "date-time"})


_Since = Annotated[str | None, _time_query("only episodes started at or after (RFC 3339)")]
_Until = Annotated[str | None, _time_query("only episodes started before (RFC 3339)")]
_WeekSince = Annotated[
    str | None,
    _time_query("only weeks starting at or after this time's week (RFC 3339; whole weeks)"),
]
_WeekUntil = Annotated[
    str | None, _time_query("only weeks before this time's week (RFC 3339; whole weeks)")
]


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    descriptions = {
        400: "The body is not valid gzip (every member of a multi-member body is read; "
        "anything else after a member is refused) or not JSON; nothing was stored.",
        401: "No token, an unknown token, a revoked or an expired one.",
        403: "The token's team or scope does not allow this.",
        406: "Parquet was asked for but pyarrow is not installed on the collector.",
        413: "The body or the batch is over the collector's limits; nothing was stored.",
        415: "The body is not application/json, or its Content-Encoding is not gzip.",
        422: "A field has the wrong type or value (named in `field`); nothing was stored.",
        429: "Too many requests for this token; retry after Retry-After seconds.",
        503: "The database is unavailable; retry later.",
    }
    return {
        s: {
            "description": descriptions[s],
            "content": {"application/json": {"schema": wire.ERROR_SCHEMA}},
        }
        for s in statuses
    }


def create_app(
    storage: Storage, limits: Limits | None = None, *, clock: Callable[[], float] = time.time
) -> FastAPI:
    limits = limits or Limits()
    validate_batch = compile_schema(wire.batch_schema())
    rate_limiter = RateLimiter(limits.rate, limits.burst)
    app = FastAPI(
        title="agent-capture team collector",
        version=__version__,
        description=(
            "Receives the anonymized episodes a team's members opted to upload, and gives the "
            "team its report and an export. Every path but /v1/health and /openapi.json needs "
            "`Authorization: Bearer <token>`, checked before anything else is answered (a "
            "missing, unknown, revoked or expired token is 401 on any other path, also one "
            "that does not exist); a token belongs to one team, has one scope (ingest, read, "
            "export) and may have an expiry."
        ),
        docs_url=None,
        redoc_url=None,
    )
    app.state.storage = storage
    app.state.limits = limits
    bearer = HTTPBearer(auto_error=False, description="A token from `capture collector token`.")

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        await _drain(request)
        return _error_response(exc.status, exc.body(), exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        await _drain(request)
        first = exc.errors()[0] if exc.errors() else {}
        field = field_path(tuple(p for p in first.get("loc", ()) if p not in ("query", "path")))
        message = f"{field}: {first.get('msg', 'invalid')}" if field else "invalid request"
        return _error_response(422, {"error": "invalid", "message": message, "field": field})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        await _drain(request)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
        return _error_response(
            exc.status_code,
            {"error": code, "message": str(exc.detail), "field": None},
            dict(exc.headers or {}),
        )

    async def identify(authorization: str | None) -> TokenRecord:
        token = bearer_token(authorization)
        record = await _call_storage(storage.find_token, digest(token))
        return live_token(record, clock())

    app.add_middleware(_AuthenticateFirst, identify=identify)

    async def authenticate(request: Request, _: Annotated[Any, Depends(bearer)]) -> TokenRecord:
        record: TokenRecord | None = request.scope.get(_TOKEN_KEY)
        if record is None:
            record = await identify(request.headers.get("authorization"))
        allowed, wait = rate_limiter.allow(record.id, clock())
        if not allowed:
            raise ApiError(
                429,
                "rate_limited",
                f"more than {limits.rate:g} requests per second for this token",
                headers={"Retry-After": str(wait)},
            )
        return record

    @app.get(
        "/v1/health",
        summary="Is the collector up and its database reachable?",
        responses={
            200: {
                "description": "Up.",
                "content": {"application/json": {"schema": wire.HEALTH_SCHEMA}},
            },
            **_errors(503),
        },
    )
    async def health() -> Response:
        await _call_storage(storage.ping)
        return JSONResponse(
            {
                "status": "ok",
                "database": storage.kind,
                "version": __version__,
                "limits": {
                    "max_body_bytes": limits.max_body_bytes,
                    "max_batch": limits.max_batch,
                    "max_level": limits.max_level,
                },
            }
        )

    def process(
        raw: bytes, encoding: str | None, team: str, contributor: str | None
    ) -> list[dict[str, Any]]:
        data = decode_body(raw, encoding, limits.max_decoded_bytes)
        items = check_batch(parse_json(data), validate_batch, limits.max_batch)
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

    @app.post(
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
            "(1000 by default; see /v1/health), is refused whole with 413: split it."
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
            **_errors(400, 401, 403, 413, 415, 422, 429, 503),
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
        encoding = request.headers.get("content-encoding")
        raw = await _read_body(request, limits.max_body_bytes)
        try:
            results = await run_in_threadpool(process, raw, encoding, team, contributor)
        except _UNAVAILABLE as exc:
            log.warning("database unavailable: %s", exc)
            raise ApiError(
                503,
                "unavailable",
                "the database is unavailable; retry later",
                headers={"Retry-After": "5"},
            ) from None
        return Response(orjson.dumps({"results": results}), media_type="application/json")

    @app.get(
        "/v1/teams/{team}/report",
        summary="The team report: the personal report's figures summed over the team",
        description=(
            "Groups: the whole team, per agent, per model, per week (of `started_at`). A group "
            "with fewer than the collector's minimum of distinct contributors (5 by default) "
            "shows no figure. Needs a `read` or `export` token of the team."
        ),
        response_class=JSONResponse,
        responses={
            200: {
                "description": "The report, as JSON or as an HTML page (`format=html`).",
                "content": {
                    "application/json": {"schema": wire.REPORT_SCHEMA},
                    "text/html": {"schema": {"type": "string"}},
                },
            },
            **_errors(401, 403, 422, 429, 503),
        },
    )
    async def report(
        team: str,
        token: Annotated[TokenRecord, Depends(authenticate)],
        since: _WeekSince = None,
        until: _WeekUntil = None,
        format: ReportFormat = ReportFormat.json,  # noqa: A002 - the API's word
    ) -> Response:
        authorize(token, "read", team)
        start, end = _time_param("since", since), _time_param("until", until)
        rows = await _call_storage(storage.report_rows, team, start, end)
        curves = await _call_storage(storage.curve_rows, team, start, end)
        body = aggregate(
            rows,
            curves=curves,
            team=team,
            min_contributors=limits.min_contributors,
            generated_at=iso(clock()) or "",
            since=since,
            until=until,
        )
        if format is ReportFormat.html:
            return HTMLResponse(render_html(body))
        return JSONResponse(body)

    @app.get(
        "/v1/teams/{team}/export",
        summary="Every episode of the team (latest revision), streamed as JSONL or Parquet",
        description=(
            "JSONL: one object per line, `{id, revision, level, contributor, received_at, "
            "episode}`. Parquet (when pyarrow is installed on the collector): the same as "
            "columns, `episode` as a JSON string. Needs an `export` token of the team."
        ),
        response_class=StreamingResponse,
        responses={
            200: {
                "description": "The export, streamed.",
                "content": {
                    "application/x-ndjson": {"schema": {"type": "string"}},
                    "application/vnd.apache.parquet": {
                        "schema": {"type": "string", "format": "binary"}
                    },
                },
            },
            **_errors(401, 403, 406, 422, 429, 503),
        },
    )
    async def export(
        team: str,
        token: Annotated[TokenRecord, Depends(authenticate)],
        since: _Since = None,
        until: _Until = None,
        format: ExportFormat = ExportFormat.jsonl,  # noqa: A002 - the API's word
    ) -> Response:
        authorize(token, "export", team)
        start, end = _time_param("since", since), _time_param("until", until)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        if format is ExportFormat.parquet:
            if not parquet_available():
                raise ApiError(
                    406,
                    "parquet_unavailable",
                    "Parquet export needs pyarrow on the collector (pip install pyarrow)",
                )
            return StreamingResponse(
                parquet_chunks(storage.export_rows(team, start, end)),
                media_type="application/vnd.apache.parquet",
                headers={"Content-Disposition": f'attachment; filename="{team}-{stamp}.parquet"'},
            )
        return StreamingResponse(
            jsonl_chunks(storage.export_rows(team, start, end)),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{team}-{stamp}.jsonl"'},
        )

    return app
