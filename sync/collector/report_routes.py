"""`GET /v1/teams/{team}/report`: the team report, as JSON or as an HTML page.

No `from __future__ import annotations` here: FastAPI reads the route's annotations at run
time, and they name the authentication dependency this module is given.
"""

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, JSONResponse, Response

from sync.collector import wire
from sync.collector.backend import Storage
from sync.collector.export import iso
from sync.collector.http import WeekSince, WeekUntil, call_storage, error_responses, time_param
from sync.collector.limits import Limits
from sync.collector.report import aggregate
from sync.collector.report_html import render_html
from sync.collector.tokens import TokenRecord, authorize

__all__ = ["ReportFormat", "report_router"]


class ReportFormat(StrEnum):
    json = "json"
    html = "html"


def report_router(
    storage: Storage,
    limits: Limits,
    clock: Callable[[], float],
    authenticate: Callable[..., Any],
) -> APIRouter:
    router = APIRouter()

    @router.get(
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
            **error_responses(401, 403, 422, 429, 503),
        },
    )
    async def report(
        team: str,
        token: Annotated[TokenRecord, Depends(authenticate)],
        since: WeekSince = None,
        until: WeekUntil = None,
        format: ReportFormat = ReportFormat.json,  # noqa: A002 - the API's word
    ) -> Response:
        authorize(token, "read", team)
        start, end = time_param("since", since), time_param("until", until)
        rows = await call_storage(storage.report_rows, team, start, end)
        curves = await call_storage(storage.curve_rows, team, start, end)
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

    return router
