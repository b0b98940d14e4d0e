"""Who is asking: the bearer token checked before routing, and the routes' dependency that
also applies the per-token rate limit.

No `from __future__ import annotations` here: FastAPI reads the dependency's annotations at
run time.
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.security import HTTPBearer

from sync.collector.backend import Storage
from sync.collector.errors import ApiError
from sync.collector.http import call_storage, drain, error_response
from sync.collector.limits import Limits, RateLimiter
from sync.collector.tokens import TokenRecord, bearer_token, digest, live_token

__all__ = ["AuthenticateFirst", "Authenticator"]

# The only paths answered without a token (exactly these: `/v1/health/` is not one of them).
# The webhooks check the team's secret instead (`webhook_routes`).
_PUBLIC_PATHS = frozenset({"/v1/health", "/openapi.json", "/webhooks/github", "/webhooks/gitlab"})
_TOKEN_KEY = "capture_token"


class AuthenticateFirst:
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
            await drain(Request(scope, receive))
            await error_response(exc.status, exc.body(), exc.headers)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class Authenticator:
    """Finds a request's token record in the storage and holds the per-token rate limit."""

    def __init__(self, storage: Storage, limits: Limits, clock: Callable[[], float]) -> None:
        self._storage = storage
        self._limits = limits
        self._clock = clock
        self._rate_limiter = RateLimiter(limits.rate, limits.burst)

    async def identify(self, authorization: str | None) -> TokenRecord:
        token = bearer_token(authorization)
        record = await call_storage(self._storage.find_token, digest(token))
        return live_token(record, self._clock())

    def dependency(self) -> Callable[..., Any]:
        """The routes' dependency: the request's token record, within its rate limit. It names
        the bearer scheme, so the OpenAPI description says how to authenticate."""
        bearer = HTTPBearer(auto_error=False, description="A token from `capture collector token`.")

        async def authenticate(request: Request, _: Annotated[Any, Depends(bearer)]) -> TokenRecord:
            record: TokenRecord | None = request.scope.get(_TOKEN_KEY)
            if record is None:
                record = await self.identify(request.headers.get("authorization"))
            allowed, wait = self._rate_limiter.allow(record.id, self._clock())
            if not allowed:
                raise ApiError(
                    429,
                    "rate_limited",
                    f"more than {self._limits.rate:g} requests per second for this token",
                    headers={"Retry-After": str(wait)},
                )
            return record

        return authenticate
