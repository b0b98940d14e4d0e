"""`GET /v1/health`: is the collector up and its database reachable? Answered without a token.

No `from __future__ import annotations` here: FastAPI reads the route's annotations at run time.
"""

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from capture import __version__
from sync.collector import wire
from sync.collector.backend import Storage
from sync.collector.http import call_storage, error_responses
from sync.collector.limits import Limits

__all__ = ["health_router"]


def health_router(storage: Storage, limits: Limits) -> APIRouter:
    router = APIRouter()

    @router.get(
        "/v1/health",
        summary="Is the collector up and its database reachable?",
        responses={
            200: {
                "description": "Up.",
                "content": {"application/json": {"schema": wire.HEALTH_SCHEMA}},
            },
            **error_responses(503),
        },
    )
    async def health() -> Response:
        await call_storage(storage.ping)
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

    return router
