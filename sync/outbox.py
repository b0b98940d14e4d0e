"""The durable outbox: what is waiting to go, what went, what was set aside, and why.

Decisions are plain functions (which revision an episode gets, how long to back off, what a
collector's answer means for each row); `Outbox` is the store access that applies them, over the
rows `sync.store.outbox_rows` reads and writes. Each row is one revision of one episode, keyed
for the collector by `<episode id>:<revision>`, so that a batch sent twice (the uploader was
killed before it heard the answer) is stored once.
"""

from __future__ import annotations

import email.utils
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from capture.connection import sqlite3
from sync.store import outbox_rows

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "ISOLATE_AFTER",
    "NewRow",
    "Outbox",
    "Row",
    "RowState",
    "Verdict",
    "backoff_delay",
    "body_for",
    "classify_status",
    "idempotency_key",
    "item_json",
    "next_revision",
    "parse_retry_after",
    "read_results",
]

#: A row whose batch failed this many times is set aside (it never blocks newer rows).
DEFAULT_MAX_ATTEMPTS = 8
#: A row that failed this many times goes alone, so that one bad row cannot fail a batch.
ISOLATE_AFTER = 2


class RowState(StrEnum):
    QUEUED = "queued"
    SENT = "sent"
    SET_ASIDE = "set_aside"
    QUARANTINED = "quarantined"
    SUPERSEDED = "superseded"


@dataclass(frozen=True, slots=True)
class Row:
    id: int
    episode_id: str
    revision: int
    level: str
    payload: str
    attempts: int

    @property
    def key(self) -> str:
        return idempotency_key(self.episode_id, self.revision)

    @property
    def size(self) -> int:
        return len(self.payload) + 120


@dataclass(frozen=True, slots=True)
class NewRow:
    """A revision to queue (`Outbox.add_all`); a quarantined one keeps no payload."""

    episode_id: str
    revision: int
    level: str
    content_hash: str
    payload: str | None
    quarantine: str | None = None


# -- decisions -----------------------------------------------------------------------------


def idempotency_key(episode_id: str, revision: int) -> str:
    return f"{episode_id}:{revision}"


def next_revision(latest: tuple[int, str] | None, content_hash: str) -> int | None:
    """The revision a projection gets, or None when it is what the latest revision already
    holds. `latest` is (revision, content hash) of the episode's newest outbox row."""
    if latest is None:
        return 1
    revision, previous_hash = latest
    if previous_hash == content_hash:
        return None
    return revision + 1


def backoff_delay(failures: int, *, base: float, cap: float, rand: float) -> float:
    """Exponential backoff with "equal jitter": half of base * 2^(n-1) (capped) is waited for
    sure, the other half at random (`rand` in [0, 1)), so that many clients that failed
    together do not retry together."""
    exp = min(cap, base * (2 ** max(0, failures - 1)))
    return exp / 2 + rand * exp / 2


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


class Verdict(StrEnum):
    RESULTS = "results"  # 200: read the per-episode results
    AUTH = "auth"  # 401/403: stop, nothing is wrong with the rows
    SPLIT = "split"  # 4xx for a batch of several: find the bad rows by halving
    SET_ASIDE = "set_aside"  # 4xx for a single row: it will never be accepted
    RATE_LIMITED = "rate_limited"  # 429: wait as told
    RETRY = "retry"  # 5xx and the unexpected: back off and try again


def classify_status(status: int, batch_size: int) -> Verdict:
    if status == 200:
        return Verdict.RESULTS
    if status in (401, 403):
        return Verdict.AUTH
    if status == 429:
        return Verdict.RATE_LIMITED
    if 400 <= status < 500 and status != 408:
        return Verdict.SPLIT if batch_size > 1 else Verdict.SET_ASIDE
    return Verdict.RETRY


def read_results(rows: Sequence[Row], body: Any) -> dict[int, tuple[str, str | None]]:
    """Row id -> (status, error) from a 200 answer. Rows the answer does not mention are left
    out (they are retried); a malformed answer mentions none."""
    by_key: dict[tuple[Any, Any], int] = {(r.episode_id, r.revision): r.id for r in rows}
    out: dict[int, tuple[str, str | None]] = {}
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, list):
        return out
    for item in results:
        if not isinstance(item, dict):
            continue
        row_id = by_key.get((item.get("id"), item.get("revision")))
        status = item.get("status")
        if row_id is None or status not in ("accepted", "duplicate", "rejected"):
            continue
        error = item.get("error")
        out[row_id] = (status, str(error) if error is not None else None)
    return out


def item_json(row: Row) -> str:
    """One element of the request's `episodes` list, byte for byte as sent. The payload is
    stored serialized, so preview and upload cannot disagree."""
    return (
        f'{{"id":{_json_string(row.episode_id)},"revision":{row.revision},'
        f'"idempotency_key":{_json_string(row.key)},"level":{_json_string(row.level)},'
        f'"episode":{row.payload}}}'
    )


def _json_string(value: str) -> str:
    """`json.dumps(value)`; ids and levels are printable ASCII with nothing to escape, which
    is quoted as it is (3 of these per episode, each 10x cheaper than json.dumps)."""
    if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    import json

    return json.dumps(value)


def body_for(rows: Iterable[Row]) -> bytes:
    return ('{"episodes":[' + ",".join(item_json(r) for r in rows) + "]}").encode(
        "utf-8", "surrogatepass"
    )


# -- store access --------------------------------------------------------------------------


class Outbox:
    """The outbox's rows on a connection (`sync.store.outbox_rows`), typed: what the uploader,
    the refresh and `capture sync` read and write."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def latest(self, episode_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """(revision, content hash) of each episode's newest row."""
        return outbox_rows.latest(self.conn, episode_ids)

    def add(
        self,
        episode_id: str,
        revision: int,
        *,
        level: str,
        content_hash: str,
        payload: str | None,
        now: float,
        quarantine: str | None = None,
    ) -> None:
        """A new revision; an older one still waiting is superseded (only the newest goes)."""
        if revision > 1:
            outbox_rows.supersede_queued(self.conn, [episode_id])
        state = RowState.QUARANTINED if quarantine else RowState.QUEUED
        outbox_rows.insert(
            self.conn,
            [(episode_id, revision, level, content_hash, payload, state, quarantine, now, now)],
        )

    def add_all(self, rows: Sequence[NewRow], now: float) -> None:
        """`add` for many rows at once (each episode once): older queued revisions superseded,
        then the new rows inserted, each step one statement run over all of them."""
        outbox_rows.supersede_queued(self.conn, [r.episode_id for r in rows if r.revision > 1])
        outbox_rows.insert(
            self.conn,
            [
                (
                    r.episode_id,
                    r.revision,
                    r.level,
                    r.content_hash,
                    None if r.quarantine else r.payload,
                    RowState.QUARANTINED if r.quarantine else RowState.QUEUED,
                    r.quarantine,
                    now,
                    now,
                )
                for r in rows
            ],
        )

    def due(self, now: float, limit: int) -> list[Row]:
        return [Row(*r) for r in outbox_rows.due(self.conn, now, limit)]

    def queued(self, episode_id: str | None = None) -> list[Row]:
        return [Row(*r) for r in outbox_rows.queued(self.conn, episode_id)]

    def last_row(self, episode_id: str) -> sqlite3.Row | None:
        return outbox_rows.last_row(self.conn, episode_id)

    def next_due_at(self) -> float | None:
        return outbox_rows.next_due_at(self.conn)

    def mark_sent(self, row_ids: Sequence[int], now: float) -> None:
        outbox_rows.mark_sent(self.conn, row_ids, now)

    def set_aside(self, updates: Sequence[tuple[int, str]]) -> None:
        outbox_rows.set_aside(self.conn, updates)

    def failed(self, updates: Sequence[tuple[int, float, str]], max_attempts: int) -> int:
        """Rows whose try failed: (id, next attempt time, error). Those reaching the attempt
        limit are set aside; returns how many were."""
        return outbox_rows.failed(self.conn, updates, max_attempts)

    def note_error(self, row_ids: Sequence[int], error: str) -> None:
        """The collector could not be reached: no attempt is counted against the rows."""
        outbox_rows.note_error(self.conn, row_ids, error)

    def uncovered(self, row_ids: Sequence[int]) -> set[int]:
        """The queued rows among these whose workspace is not opted in any more (a read)."""
        return outbox_rows.uncovered(self.conn, row_ids)

    def withdraw_uncovered(self, row_ids: Sequence[int]) -> set[int]:
        """Drop the queued rows among these whose workspace is not opted in any more (sync was
        turned off, or the workspace taken out, after they were queued: by another process, or
        while this one was filling the outbox). Returns the ids dropped."""
        return outbox_rows.withdraw_uncovered(self.conn, row_ids)

    def retry_set_aside(self) -> int:
        return outbox_rows.retry_set_aside(self.conn)

    def counts(self) -> dict[str, int]:
        return {s.value: 0 for s in RowState} | outbox_rows.counts(self.conn)

    def listed(self, state: RowState, limit: int = 20) -> list[sqlite3.Row]:
        return outbox_rows.listed(self.conn, state.value, limit)
