"""The collector's HTTP service: the app, its error answers, authentication, and the routers.

Wiring only: the routes are in one router per area (`health_routes`, `episode_routes`,
`report_routes`, `export_routes`), what they share about HTTP in `http`, the token check in
`auth`; the decisions live in `ingest`, `tokens`, `limits` and `report`, the data in a
`Storage`. Storage calls and the CPU work on a batch run in the thread pool, so the event loop
keeps answering health checks while a large batch is parsed.

No `from __future__ import annotations` here: FastAPI reads the exception handlers'
annotations at run time.
"""

import time
from collections.abc import Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from capture import __version__
from sync.collector.auth import AuthenticateFirst, Authenticator
from sync.collector.backend import Storage
from sync.collector.episode_routes import episodes_router
from sync.collector.errors import ApiError
from sync.collector.export_routes import export_router
from sync.collector.health_routes import health_router
from sync.collector.http import drain, error_response
from sync.collector.limits import Limits
from sync.collector.report_routes import report_router
from sync.collector.validation import field_path
from sync.collector.webhook_routes import webhooks_router

__all__ = ["create_app"]


def create_app(
    storage: Storage, limits: Limits | None = None, *, clock: Callable[[], float] = time.time
) -> FastAPI:
    limits = limits or Limits()
    app = FastAPI(
        title="agent-capture team collector",
        version=__version__,
        description=(
            "Receives the anonymized episodes a team's members opted to upload, and gives the "
            "team its report and an export. Every path but /v1/health and /openapi.json needs "
            "`Authorization: Bearer <token>`, checked before anything else is answered (a "
            "missing, unknown, revoked or expired token is 401 on any other path, also one "
            "that does not exist); a token belongs to one team, has one scope (ingest, read, "
            "export) and may have an expiry. The forge webhooks (/webhooks/github, "
            "/webhooks/gitlab) take no token: a delivery is checked against the team's "
            "webhook secret instead."
        ),
        docs_url=None,
        redoc_url=None,
        # `/v1/episodes/` is 404 like any unknown path (after the token check), never a 307
        # that tells a client holding another team's token where the route is
        redirect_slashes=False,
    )
    app.state.storage = storage
    app.state.limits = limits
    _answer_errors(app)
    authenticator = Authenticator(storage, limits, clock)
    app.add_middleware(AuthenticateFirst, identify=authenticator.identify)
    authenticate = authenticator.dependency()
    app.include_router(health_router(storage, limits))
    app.include_router(episodes_router(storage, limits, clock, authenticate))
    app.include_router(report_router(storage, limits, clock, authenticate))
    app.include_router(export_router(storage, authenticate))
    app.include_router(webhooks_router(storage, limits, clock))
    return app


def _answer_errors(app: FastAPI) -> None:
    """Every error is answered with the same body, `{error, message, field}`, after the rest of
    the request body was read (a client still sending must get the answer)."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> Response:
        await drain(request)
        return error_response(exc.status, exc.body(), exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        await drain(request)
        first = exc.errors()[0] if exc.errors() else {}
        field = field_path(tuple(p for p in first.get("loc", ()) if p not in ("query", "path")))
        message = f"{field}: {first.get('msg', 'invalid')}" if field else "invalid request"
        return error_response(422, {"error": "invalid", "message": message, "field": field})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        await drain(request)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
        return error_response(
            exc.status_code,
            {"error": code, "message": str(exc.detail), "field": None},
            dict(exc.headers or {}),
        )
