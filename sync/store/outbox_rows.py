"""The outbox's rows (`sync_outbox`): one per revision of an episode, with its state (queued,
sent, set_aside, quarantined, superseded), its attempts and when it may be tried next.

Plain reads and writes over a connection; `sync.outbox.Outbox` gives them their types and the
uploader its decisions. Row tuples read for sending are (id, episode id, revision, level, payload,
attempts), in queue order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from capture.connection import sqlite3
from sync.store.schema import sync_tables

__all__ = [
    "counts",
    "due",
    "failed",
    "insert",
    "last_row",
    "latest",
    "listed",
    "mark_sent",
    "next_due_at",
    "note_error",
    "queued",
    "retry_set_aside",
    "set_aside",
    "supersede_queued",
    "uncovered",
    "withdraw_uncovered",
]

#: (id, episode id, revision, level, payload, attempts)
SendRow = tuple[int, str, int, str, str, int]

#: True for a `sync_outbox` row whose episode's workspace is opted in right now: sync on, the
#: workspace not taken out by name, and its own opt-in or `--all` (see `sync.settings`).
_COVERED = """EXISTS (SELECT 1 FROM sync_settings s WHERE s.id = 1 AND s.enabled = 1)
AND EXISTS (SELECT 1 FROM episodes e JOIN workspaces w ON w.id = e.workspace_id
  WHERE e.id = sync_outbox.episode_id AND (
    EXISTS (SELECT 1 FROM sync_workspaces sw WHERE sw.root = w.root AND sw.opted_out_at IS NULL)
    OR (NOT EXISTS (SELECT 1 FROM sync_workspaces sw WHERE sw.root = w.root)
        AND EXISTS (SELECT 1 FROM sync_workspaces sw WHERE sw.root = '*'
                    AND sw.opted_out_at IS NULL))))"""

_SEND_COLUMNS = "id, episode_id, revision, level, payload, attempts"


def _send_rows(rows: Iterable[Sequence[Any]]) -> list[SendRow]:
    return [(int(r[0]), str(r[1]), int(r[2]), str(r[3]), r[4], int(r[5])) for r in rows]


def latest(conn: sqlite3.Connection, episode_ids: Sequence[str]) -> dict[str, tuple[int, str]]:
    """(revision, content hash) of each episode's newest row."""
    sync_tables(conn)
    out: dict[str, tuple[int, str]] = {}
    for i in range(0, len(episode_ids), 500):
        chunk = episode_ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(
            f"""SELECT episode_id, revision, content_hash FROM sync_outbox o
                WHERE episode_id IN ({marks}) AND revision = (SELECT max(revision)
                FROM sync_outbox WHERE episode_id = o.episode_id)""",
            chunk,
        ):
            out[r[0]] = (int(r[1]), str(r[2]))
    return out


def supersede_queued(conn: sqlite3.Connection, episode_ids: Iterable[str]) -> None:
    """The rows of these episodes still waiting are superseded (only a newer one goes)."""
    # `+state`: look rows up by episode (the unique index), not through the index by state,
    # which the planner would otherwise scan whole.
    sync_tables(conn).executemany(
        """UPDATE sync_outbox SET state = 'superseded' WHERE episode_id = ?
           AND +state = 'queued'""",
        [(episode_id,) for episode_id in episode_ids],
    )


def insert(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """New rows: (episode id, revision, level, content hash, payload, state, last error,
    next attempt at, created at)."""
    sync_tables(conn).executemany(
        """INSERT INTO sync_outbox (episode_id, revision, level, content_hash, payload, state,
           last_error, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        rows,
    )


def due(conn: sqlite3.Connection, now: float, limit: int) -> list[SendRow]:
    return _send_rows(
        sync_tables(conn).execute(
            f"""SELECT {_SEND_COLUMNS} FROM sync_outbox
                WHERE state = 'queued' AND next_attempt_at <= ? ORDER BY id LIMIT ?""",
            (now, limit),
        )
    )


def queued(conn: sqlite3.Connection, episode_id: str | None = None) -> list[SendRow]:
    sql = f"SELECT {_SEND_COLUMNS} FROM sync_outbox WHERE state = 'queued'"
    params: tuple[Any, ...] = ()
    if episode_id is not None:
        sql += " AND episode_id = ?"
        params = (episode_id,)
    return _send_rows(sync_tables(conn).execute(sql + " ORDER BY id", params))


def last_row(conn: sqlite3.Connection, episode_id: str) -> sqlite3.Row | None:
    """An episode's newest row, every column."""
    return (
        sync_tables(conn)
        .execute(
            "SELECT * FROM sync_outbox WHERE episode_id = ? ORDER BY revision DESC LIMIT 1",
            (episode_id,),
        )
        .fetchone()
    )


def next_due_at(conn: sqlite3.Connection) -> float | None:
    row = (
        sync_tables(conn)
        .execute("SELECT min(next_attempt_at) FROM sync_outbox WHERE state = 'queued'")
        .fetchone()
    )
    return None if row is None or row[0] is None else float(row[0])


def mark_sent(conn: sqlite3.Connection, row_ids: Sequence[int], now: float) -> None:
    sync_tables(conn).executemany(
        """UPDATE sync_outbox SET state = 'sent', sent_at = ?, attempts = attempts + 1,
           last_error = NULL WHERE id = ? AND state = 'queued'""",
        [(now, i) for i in row_ids],
    )


def set_aside(conn: sqlite3.Connection, updates: Sequence[tuple[int, str]]) -> None:
    """(id, error) of queued rows that will never be accepted."""
    sync_tables(conn).executemany(
        """UPDATE sync_outbox SET state = 'set_aside', attempts = attempts + 1,
           last_error = ? WHERE id = ? AND state = 'queued'""",
        [(error, i) for i, error in updates],
    )


def failed(
    conn: sqlite3.Connection, updates: Sequence[tuple[int, float, str]], max_attempts: int
) -> int:
    """Rows whose try failed: (id, next attempt time, error), one more attempt counted. Those
    reaching the attempt limit are set aside; returns how many were."""
    sync_tables(conn).executemany(
        """UPDATE sync_outbox SET attempts = attempts + 1, next_attempt_at = ?,
           last_error = ? WHERE id = ? AND state = 'queued'""",
        [(at, error, i) for i, at, error in updates],
    )
    ids = [i for i, _, _ in updates]
    marks = ",".join("?" * len(ids))
    return int(
        conn.execute(
            f"""UPDATE sync_outbox SET state = 'set_aside',
                last_error = 'gave up after ' || attempts || ' attempts: ' || last_error
                WHERE id IN ({marks}) AND state = 'queued' AND attempts >= ?""",
            (*ids, max_attempts),
        ).rowcount
        or 0
    )


def note_error(conn: sqlite3.Connection, row_ids: Sequence[int], error: str) -> None:
    """An error on queued rows that counts no attempt against them."""
    sync_tables(conn).executemany(
        "UPDATE sync_outbox SET last_error = ? WHERE id = ? AND state = 'queued'",
        [(error, i) for i in row_ids],
    )


def uncovered(conn: sqlite3.Connection, row_ids: Sequence[int]) -> set[int]:
    """The queued rows among these whose workspace is not opted in any more (a read)."""
    return _uncovered(conn, "SELECT id FROM sync_outbox", "", row_ids)


def withdraw_uncovered(conn: sqlite3.Connection, row_ids: Sequence[int]) -> set[int]:
    """Delete the queued rows among these whose workspace is not opted in any more; returns
    their ids."""
    return _uncovered(conn, "DELETE FROM sync_outbox", " RETURNING id", row_ids)


def _uncovered(conn: sqlite3.Connection, head: str, tail: str, row_ids: Sequence[int]) -> set[int]:
    sync_tables(conn)
    out: set[int] = set()
    for i in range(0, len(row_ids), 500):
        chunk = list(row_ids[i : i + 500])
        marks = ",".join("?" * len(chunk))
        sql = f"{head} WHERE id IN ({marks}) AND state = 'queued' AND NOT ({_COVERED}){tail}"
        out.update(r[0] for r in conn.execute(sql, chunk))
    return out


def retry_set_aside(conn: sqlite3.Connection) -> int:
    """Queue again the set-aside rows that are their episode's newest; returns how many."""
    return int(
        sync_tables(conn)
        .execute(
            """UPDATE sync_outbox SET state = 'queued', attempts = 0, next_attempt_at = 0
               WHERE state = 'set_aside' AND revision = (SELECT max(revision)
               FROM sync_outbox o WHERE o.episode_id = sync_outbox.episode_id)"""
        )
        .rowcount
        or 0
    )


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows by state (the states that have none left out)."""
    return {
        str(state): int(n)
        for state, n in sync_tables(conn).execute(
            "SELECT state, count(*) FROM sync_outbox GROUP BY state"
        )
    }


def listed(conn: sqlite3.Connection, state: str, limit: int = 20) -> list[sqlite3.Row]:
    """The newest rows in a state: episode id, revision, attempts, last error, created at."""
    return (
        sync_tables(conn)
        .execute(
            """SELECT episode_id, revision, attempts, last_error, created_at FROM sync_outbox
               WHERE state = ? ORDER BY id DESC LIMIT ?""",
            (state, limit),
        )
        .fetchall()
    )
