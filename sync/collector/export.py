"""The export for a team's ML people: one line (or Parquet row) per episode, latest revision;
and the same episodes as the training export's input (`training_episodes`).

Both encoders consume rows lazily and yield bytes as they go, so an export of millions of
episodes streams in constant memory. The stored episode JSON is spliced in as stored, not parsed
again.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import orjson

from sync.collector.backend import ExportRow

__all__ = [
    "PARQUET_COLUMNS",
    "iso",
    "jsonl_chunks",
    "parquet_available",
    "parquet_chunks",
    "training_episodes",
]

PARQUET_COLUMNS = (
    "id",
    "revision",
    "level",
    "contributor",
    "received_at",
    "agent",
    "model",
    "started_at",
    "episode",
)


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _line(row: ExportRow) -> bytes:
    head = orjson.dumps(
        {
            "id": row.episode_id,
            "revision": row.revision,
            "level": row.level,
            "contributor": row.contributor,
            "received_at": iso(row.received_at),
        }
    )
    return head[:-1] + b',"episode":' + row.body.encode() + b"}\n"


def jsonl_chunks(rows: Iterable[ExportRow], chunk_bytes: int = 256 * 1024) -> Iterator[bytes]:
    buffer: list[bytes] = []
    size = 0
    for row in rows:
        line = _line(row)
        buffer.append(line)
        size += len(line)
        if size >= chunk_bytes:
            yield b"".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)


def parquet_available() -> bool:
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


class _Sink(io.RawIOBase):
    """A write-only stream whose bytes are handed out as they come; it keeps its position,
    which the Parquet footer's offsets are taken from."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        self._position += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self._position

    def take(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def parquet_chunks(rows: Iterable[ExportRow], row_group: int = 10_000) -> Iterator[bytes]:
    """A Parquet file, written one row group at a time and handed out as it grows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("id", pa.string()),
            ("revision", pa.int32()),
            ("level", pa.string()),
            ("contributor", pa.string()),
            ("received_at", pa.timestamp("ms", tz="UTC")),
            ("agent", pa.string()),
            ("model", pa.string()),
            ("started_at", pa.timestamp("ms", tz="UTC")),
            ("episode", pa.string()),
        ]
    )
    sink = _Sink()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema, compression="zstd")

    def drain() -> bytes:
        return sink.take()

    def flush(batch: list[ExportRow]) -> None:
        columns: dict[str, list[Any]] = {
            "id": [r.episode_id for r in batch],
            "revision": [r.revision for r in batch],
            "level": [r.level for r in batch],
            "contributor": [r.contributor for r in batch],
            "received_at": [int(r.received_at * 1000) for r in batch],
            "agent": [r.agent for r in batch],
            "model": [r.model for r in batch],
            "started_at": [
                None if r.started_at is None else int(r.started_at * 1000) for r in batch
            ],
            "episode": [r.body for r in batch],
        }
        writer.write_table(pa.table(columns, schema=schema))

    batch: list[ExportRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= row_group:
            flush(batch)
            batch = []
            yield drain()
    if batch:
        flush(batch)
    writer.close()
    yield drain()


def training_episodes(rows: Iterable[ExportRow]) -> Iterator[dict[str, Any]]:
    """Each stored episode as `capture.export` reads it, one at a time, with where it came from.

    Uploads carry what the uploader's level let through: no `hunk_context` (so prompts have no
    surrounding code and there is no user's final text: preference pairs come only from kept
    siblings), hunks only above the metrics level, and at every level each proposal's and the
    episode's `tier` as decided on the uploader's machine (what `--tiers` selects by; an upload
    from before tiers were carried has none)."""
    for row in rows:
        try:
            episode = orjson.loads(row.body)
        except orjson.JSONDecodeError:
            continue  # stored bodies were validated on ingest; a damaged one is skipped
        if not isinstance(episode, dict):
            continue
        episode.setdefault("level", row.level)
        episode["collector"] = {
            "revision": row.revision,
            "contributor": row.contributor,
            "received_at": iso(row.received_at),
        }
        yield episode
