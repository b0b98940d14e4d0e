"""Where the collector keeps episodes and tokens: the backend chosen by URL.

The interface is in `sync.collector.backend` (re-exported here); each backend is imported only
when its URL is opened, so a SQLite-only collector never loads psycopg.

Two tables carry episodes. `revisions` is the ledger: one row per (team, episode id, revision)
ever received, with the episode's JSON; its primary key is what makes an upload idempotent,
whichever replica receives it and however often a client retries. `episodes` holds, per episode,
the figures of its latest revision only: it is narrow, so the team report scans it fast.
Both are written in one transaction per batch: a collector killed mid-batch leaves nothing.
"""

from __future__ import annotations

from pathlib import Path

from sync.collector.backend import ExportRow, Storage, time_filter

__all__ = [
    "ExportRow",
    "Storage",
    "StorageUrlError",
    "open_storage",
    "parse_db_url",
    "time_filter",
]


class StorageUrlError(ValueError):
    pass


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
