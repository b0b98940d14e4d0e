"""Where the collector keeps episodes and tokens: the interface, and the choice by URL.

Two tables carry episodes. `revisions` is the ledger: one row per (team, episode id, revision)
ever received, with the episode's JSON; its primary key is what makes an upload idempotent,
whichever replica receives it and however often a client retries. `episodes` holds, per episode,
the figures of its latest revision only: it is narrow, so the team report scans it fast.
Both are written in one transaction per batch: a collector killed mid-batch leaves nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sync.collector.ingest import EpisodeRow
from sync.collector.report import CurveRow, ReportRow
from sync.collector.tokens import TokenRecord

__all__ = [
    "ExportRow",
    "Storage",
    "StorageUrlError",
    "open_storage",
    "parse_db_url",
    "time_filter",
]


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


class StorageUrlError(ValueError):
    pass


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

    def close(self) -> None: ...


def parse_db_url(url: str) -> tuple[str, str]:
    """("sqlite", path) or ("postgresql", conninfo).

    `sqlite:///relative.db` and `sqlite:////absolute/path.db` (as SQLAlchemy spells them), or a
    plain path; `postgresql://...` or `postgres://...` as libpq takes them.
    """
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql", url
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://") :]
        if not rest.startswith("/") or rest == "/":
            raise StorageUrlError(f"not a SQLite URL: {url!r} (use sqlite:///PATH)")
        return "sqlite", rest[1:]
    if "://" in url:
        raise StorageUrlError(f"unsupported database URL: {url!r} (sqlite:/// or postgresql://)")
    return "sqlite", url


def open_storage(url: str) -> Storage:
    kind, target = parse_db_url(url)
    if kind == "postgresql":
        from sync.collector.storage_postgres import PostgresStorage

        return PostgresStorage(target)
    from sync.collector.storage_sqlite import SqliteStorage

    return SqliteStorage(Path(target))
