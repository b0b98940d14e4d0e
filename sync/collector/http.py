"""What the collector's routes share about HTTP: error bodies, the request body read under a
cap, storage calls off the event loop, time parameters, and the error responses the OpenAPI
description names.

No `from __future__ import annotations` here: FastAPI reads the annotations of the query
parameters defined here at run time.
"""

import asyncio
import logging
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from capture.connection import sqlite3
from sync.collector import wire
from sync.collector.errors import ApiError
from sync.collector.ingest import parse_time

__all__ = [
    "UNAVAILABLE",
    "Since",
    "Until",
    "WeekSince",
    "WeekUntil",
    "call_storage",
    "drain",
    "error_response",
    "error_responses",
    "read_body",
    "read_body_into",
    "time_param",
    "unavailable",
]

log = logging.getLogger("capture.collector")

# How much of an oversized or refused body is read (and dropped) before answering, so that the
# client, still sending, reads our answer instead of a reset connection.
_DRAIN_CAP = 256 * 1024 * 1024
_BODY_DONE = "capture_body_done"
#: The longest pause in a body being drained, and in one being read unless the route says.
_IDLE_S = 30.0


async def _receive(request: Request, idle_s: float) -> Any:
    """The next message of the body, or 408 when the client pauses longer than `idle_s` (a
    slow client must not hold a connection and a worker's slot for ever)."""
    try:
        return await asyncio.wait_for(request.receive(), idle_s)
    except TimeoutError:
        request.scope[_BODY_DONE] = True  # nothing more is read: the connection closes
        raise ApiError(
            408, "body_timeout", f"no part of the body arrived for {idle_s:g} s"
        ) from None


def error_response(
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


#: What a database that cannot be reached raises, whichever backend.
UNAVAILABLE = _unavailable_errors()


def unavailable(exc: BaseException) -> ApiError:
    """The 503 answered when the database is unavailable (logged here)."""
    log.warning("database unavailable: %s", exc)
    return ApiError(
        503,
        "unavailable",
        "the database is unavailable; retry later",
        headers={"Retry-After": "5"},
    )


async def call_storage(func: Callable[..., Any], *args: Any) -> Any:
    try:
        return await run_in_threadpool(func, *args)
    except UNAVAILABLE as exc:
        raise unavailable(exc) from None


async def drain(request: Request) -> None:
    """Read and drop what is left of the request body, up to a cap."""
    if request.scope.get(_BODY_DONE) or request.method not in ("POST", "PUT", "PATCH"):
        return
    request.scope[_BODY_DONE] = True
    received = 0
    while received < _DRAIN_CAP:
        try:
            message = await asyncio.wait_for(request.receive(), _IDLE_S)
        except TimeoutError:
            return
        if message["type"] != "http.request":
            return
        received += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def read_body(request: Request, limit: int) -> bytes:
    too_large = ApiError(
        413, "body_too_large", f"the body is larger than {limit} bytes; send smaller batches"
    )
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        await drain(request)
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
            await drain(request)
            raise too_large
        parts.append(chunk)
        if not message.get("more_body", False):
            request.scope[_BODY_DONE] = True
            return b"".join(parts)


async def read_body_into(
    request: Request, limit: int, feed: Callable[[bytes], None], idle_s: float = _IDLE_S
) -> None:
    """`read_body`, each chunk handed to `feed` as it arrives instead of kept (`feed` may raise
    to refuse the body: the rest is drained before the answer); 408 after a pause of
    `idle_s`."""
    too_large = ApiError(
        413, "body_too_large", f"the body is larger than {limit} bytes; send smaller batches"
    )
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        await drain(request)
        raise too_large
    size = 0
    while True:
        message = await _receive(request, idle_s)
        if message["type"] != "http.request":
            raise ApiError(400, "incomplete_body", "the client went away mid-body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            await drain(request)
            raise too_large
        more = message.get("more_body", False)
        if not more:
            request.scope[_BODY_DONE] = True
        feed(chunk)
        if not more:
            return


def time_param(name: str, text: str | None) -> float | None:
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


Since = Annotated[str | None, _time_query("only episodes started at or after (RFC 3339)")]
Until = Annotated[str | None, _time_query("only episodes started before (RFC 3339)")]
WeekSince = Annotated[
    str | None,
    _time_query("only weeks starting at or after this time's week (RFC 3339; whole weeks)"),
]
WeekUntil = Annotated[
    str | None, _time_query("only weeks before this time's week (RFC 3339; whole weeks)")
]


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI description of these error statuses, each with the error body's schema."""
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
