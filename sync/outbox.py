"""The durable outbox: what is waiting to go, what went, what was set aside, and why.

Decisions are plain functions (which revision an episode gets, how long to back off, what a
collector's answer means for each row); `Outbox` is the store access that applies them. Each row
is one revision of one episode, keyed for the collector by `<episode id>:<revision>`, so that a
batch sent twice (the uploader was killed before it heard the answer) is stored once.
"""

from __future__ import annotations

import email.utils
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from capture.connection import sqlite3

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

#: True for a `sync_outbox` row whose episode's workspace is opted in right now: sync on, the
#: workspace not taken out by name, and its own opt-in or `--all` (see `sync.settings`).
_COVERED = """EXISTS (SELECT 1 FROM sync_settings s WHERE s.id = 1 AND s.enabled = 1)
AND EXISTS (SELECT 1 FROM episodes e JOIN workspaces w ON w.id = e.workspace_id
  WHERE e.id = sync_outbox.episode_id AND (
    EXISTS (SELECT 1 FROM sync_workspaces sw WHERE sw.root = w.root AND sw.opted_out_at IS NULL)
    OR (NOT EXISTS (SELECT 1 FROM sync_workspaces sw WHERE sw.root = w.root)
        AND EXISTS (SELECT 1 FROM sync_workspaces sw WHERE sw.root = '*'
                    AND sw.opted_out_at IS NULL))))"""


def _row(r: sqlite3.Row) -> Row:
    return Row(r["id"], r["episode_id"], r["revision"], r["level"], r["payload"], r["attempts"])


class Outbox:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def latest(self, episode_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
        """(revision, content hash) of each episode's newest row."""
        out: dict[str, tuple[int, str]] = {}
        for i in range(0, len(episode_ids), 500):
            chunk = episode_ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(
                f"""SELECT episode_id, revision, content_hash FROM sync_outbox o
                    WHERE episode_id IN ({marks}) AND revision = (SELECT max(revision)
                    FROM sync_outbox WHERE episode_id = o.episode_id)""",
                chunk,
            ):
                out[r[0]] = (int(r[1]), str(r[2]))
        return out

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
            # `+state`: look rows up by episode (the unique index), not through the partial
            # index of queued rows, which the planner would otherwise scan whole.
            self.conn.execute(
                """UPDATE sync_outbox SET state = 'superseded' WHERE episode_id = ?
                   AND +state = 'queued'""",
                (episode_id,),
            )
        self.conn.execute(
            """INSERT INTO sync_outbox (episode_id, revision, level, content_hash, payload, state,
               last_error, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                episode_id,
                revision,
                level,
                content_hash,
                payload,
                RowState.QUARANTINED if quarantine else RowState.QUEUED,
                quarantine,
                now,
                now,
            ),
        )

    def add_all(self, rows: Sequence[NewRow], now: float) -> None:
        """`add` for many rows at once (each episode once): older queued revisions superseded,
        then the new rows inserted, each step one statement run over all of them."""
        self.conn.executemany(
            """UPDATE sync_outbox SET state = 'superseded' WHERE episode_id = ?
               AND +state = 'queued'""",
            [(r.episode_id,) for r in rows if r.revision > 1],
        )
        self.conn.executemany(
            """INSERT INTO sync_outbox (episode_id, revision, level, content_hash, payload, state,
               last_error, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
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
        return [
            _row(r)
            for r in self.conn.execute(
                """SELECT id, episode_id, revision, level, payload, attempts FROM sync_outbox
                   WHERE state = 'queued' AND next_attempt_at <= ? ORDER BY id LIMIT ?""",
                (now, limit),
            )
        ]

    def queued(self, episode_id: str | None = None) -> list[Row]:
        sql = """SELECT id, episode_id, revision, level, payload, attempts FROM sync_outbox
                 WHERE state = 'queued'"""
        params: tuple[Any, ...] = ()
        if episode_id is not None:
            sql += " AND episode_id = ?"
            params = (episode_id,)
        return [_row(r) for r in self.conn.execute(sql + " ORDER BY id", params)]

    def last_row(self, episode_id: str) -> sqlite3.Row | None:
        return self.conn.execute(
            "SELECT * FROM sync_outbox WHERE episode_id = ? ORDER BY revision DESC LIMIT 1",
            (episode_id,),
        ).fetchone()

    def next_due_at(self) -> float | None:
        row = self.conn.execute(
            "SELECT min(next_attempt_at) FROM sync_outbox WHERE state = 'queued'"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def mark_sent(self, row_ids: Sequence[int], now: float) -> None:
        self.conn.executemany(
            """UPDATE sync_outbox SET state = 'sent', sent_at = ?, attempts = attempts + 1,
               last_error = NULL WHERE id = ? AND state = 'queued'""",
            [(now, i) for i in row_ids],
        )

    def set_aside(self, updates: Sequence[tuple[int, str]]) -> None:
        self.conn.executemany(
            """UPDATE sync_outbox SET state = 'set_aside', attempts = attempts + 1,
               last_error = ? WHERE id = ? AND state = 'queued'""",
            [(error, i) for i, error in updates],
        )

    def failed(self, updates: Sequence[tuple[int, float, str]], max_attempts: int) -> int:
        """Rows whose try failed: (id, next attempt time, error). Those reaching the attempt
        limit are set aside; returns how many were."""
        self.conn.executemany(
            """UPDATE sync_outbox SET attempts = attempts + 1, next_attempt_at = ?,
               last_error = ? WHERE id = ? AND state = 'queued'""",
            [(at, error, i) for i, at, error in updates],
        )
        ids = [i for i, _, _ in updates]
        marks = ",".join("?" * len(ids))
        return int(
            self.conn.execute(
                f"""UPDATE sync_outbox SET state = 'set_aside',
                    last_error = 'gave up after ' || attempts || ' attempts: ' || last_error
                    WHERE id IN ({marks}) AND state = 'queued' AND attempts >= ?""",
                (*ids, max_attempts),
            ).rowcount
            or 0
        )

    def note_error(self, row_ids: Sequence[int], error: str) -> None:
        """The collector could not be reached: no attempt is counted against the rows."""
        self.conn.executemany(
            "UPDATE sync_outbox SET last_error = ? WHERE id = ? AND state = 'queued'",
            [(error, i) for i in row_ids],
        )

    def uncovered(self, row_ids: Sequence[int]) -> set[int]:
        """The queued rows among these whose workspace is not opted in any more (a read)."""
        return self._uncovered("SELECT id FROM sync_outbox", "", row_ids)

    def withdraw_uncovered(self, row_ids: Sequence[int]) -> set[int]:
        """Drop the queued rows among these whose workspace is not opted in any more (sync was
        turned off, or the workspace taken out, after they were queued: by another process, or
        while this one was filling the outbox). Returns the ids dropped."""
        return self._uncovered("DELETE FROM sync_outbox", " RETURNING id", row_ids)

    def _uncovered(self, head: str, tail: str, row_ids: Sequence[int]) -> set[int]:
        out: set[int] = set()
        for i in range(0, len(row_ids), 500):
            chunk = list(row_ids[i : i + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"{head} WHERE id IN ({marks}) AND state = 'queued' AND NOT ({_COVERED}){tail}"
            out.update(r[0] for r in self.conn.execute(sql, chunk))
        return out

    def retry_set_aside(self) -> int:
        return int(
            self.conn.execute(
                """UPDATE sync_outbox SET state = 'queued', attempts = 0, next_attempt_at = 0
                   WHERE state = 'set_aside' AND revision = (SELECT max(revision)
                   FROM sync_outbox o WHERE o.episode_id = sync_outbox.episode_id)"""
            ).rowcount
            or 0
        )

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in RowState}
        for state, n in self.conn.execute("SELECT state, count(*) FROM sync_outbox GROUP BY state"):
            out[state] = int(n)
        return out

    def listed(self, state: RowState, limit: int = 20) -> list[sqlite3.Row]:
        return self.conn.execute(
            """SELECT episode_id, revision, attempts, last_error, created_at FROM sync_outbox
               WHERE state = ? ORDER BY id DESC LIMIT ?""",
            (state.value, limit),
        ).fetchall()
