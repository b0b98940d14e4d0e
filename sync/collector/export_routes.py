"""`GET /v1/teams/{team}/export`: every episode of the team (latest revision), streamed as JSONL
or Parquet.

No `from __future__ import annotations` here: FastAPI reads the route's annotations at run
time, and they name the authentication dependency this module is given.
"""

from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response, StreamingResponse

from sync.collector.backend import Storage
from sync.collector.errors import ApiError
from sync.collector.export import jsonl_chunks, parquet_available, parquet_chunks
from sync.collector.http import Since, Until, error_responses, time_param
from sync.collector.tokens import TokenRecord, authorize

__all__ = ["ExportFormat", "export_router"]


class ExportFormat(StrEnum):
    jsonl = "jsonl"
    parquet = "parquet"


def export_router(storage: Storage, authenticate: Callable[..., Any]) -> APIRouter:
    router = APIRouter()

    @router.get(
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
            **error_responses(401, 403, 406, 422, 429, 503),
        },
    )
    async def export(
        team: str,
        token: Annotated[TokenRecord, Depends(authenticate)],
        since: Since = None,
        until: Until = None,
        format: ExportFormat = ExportFormat.jsonl,  # noqa: A002 - the API's word
    ) -> Response:
        authorize(token, "export", team)
        start, end = time_param("since", since), time_param("until", until)
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

    return router
