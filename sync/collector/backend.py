"""What a collector storage backend is: the `Storage` protocol, the rows it gives, and the
time filter both backends' SQL shares.

The backends (`storage_sqlite`, `storage_postgres`) import this module and nothing of the front
(`storage`), which picks one of them by URL, lazily: the front depends on the backends, never
the other way.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from sync.collector.forge import Delivery
from sync.collector.ingest import EpisodeRow
from sync.collector.report import CurveRow, ReportRow
from sync.collector.tokens import TokenRecord

__all__ = ["ExportRow", "Storage", "time_filter"]


def time_filter(
    since: float | None, until: float | None, column: str, placeholder: str
) -> tuple[str, list[float]]:
    """`AND column >= since AND column < until` (each part when given) and its parameters, in
    the driver's placeholder style (`?` for sqlite3, `%s` for psycopg)."""
    sql, params = "", []
    if since is not None:
        sql += f" AND {column} >= {placeholder}"
        params.append(since)
    if until is not None:
        sql += f" AND {column} < {placeholder}"
        params.append(until)
    return sql, params


@dataclass(frozen=True, slots=True)
class ExportRow:
    episode_id: str
    revision: int
    level: str
    contributor: str | None
    received_at: float
    agent: str
    model: str
    started_at: float | None
    body: str


class Storage(Protocol):
    kind: str

    def migrate(self) -> int:
        """Apply pending migrations; the number applied."""
        ...

    def ping(self) -> None: ...

    def store(self, team: str, rows: Sequence[EpisodeRow]) -> set[tuple[str, int]]:
        """Store rows unique by key; the keys that were new (the others were duplicates)."""
        ...

    def report_rows(
        self, team: str, since: float | None, until: float | None
    ) -> list[ReportRow]: ...

    def curve_rows(self, team: str, since: float | None, until: float | None) -> list[CurveRow]:
        """Per stored episode in the weeks asked, what the report cannot sum."""
        ...

    def export_rows(
        self, team: str, since: float | None, until: float | None
    ) -> Iterator[ExportRow]: ...

    def add_token(self, record: TokenRecord) -> None: ...

    def find_token(self, digest: str) -> TokenRecord | None: ...

    def list_tokens(self, team: str | None = None) -> list[TokenRecord]: ...

    def revoke_token(self, token_id: str, now: float) -> bool: ...

    def webhook_secret(self, team: str) -> str | None: ...

    def ensure_webhook_secret(self, team: str, candidate: str, now: float) -> str:
        """The team's webhook secret: `candidate` if it had none (then kept), else its own."""
        ...

    def store_delivery(self, team: str, delivery: Delivery) -> bool:
        """Keep a forge delivery; False when it was kept before (a replay)."""
        ...

    def deliveries(self, team: str) -> Iterator[Delivery]: ...

    def close(self) -> None: ...
