"""Sync's reading of the episodes, and what it last projected of each (`sync_episodes`).

A cheap fingerprint per settled episode, built from the core's tables, says whether it may have
changed since it was last projected (see `sync.refresh`, which decides what a change is worth);
`sync_episodes` keeps, per episode, the fingerprint, content hash and revision of that last
projection. Plus the few facts about episodes and workspaces that `capture sync` shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from capture.connection import sqlite3
from sync.store.schema import sync_tables

__all__ = ["episode_place", "fingerprints", "mark_projected", "roots", "workspace_roots"]

_FINGERPRINTS = """
SELECT e.id, w.root,
  coalesce(e.settled_at, '') || '|' || coalesce(e.ended_at, '') || '|' || coalesce(e.model, '')
  || '|' || length(coalesce(e.prompt, ''))
  || '|' || (SELECT count(*) || ':' || coalesce(max(p.settled_at), '') || ':'
             || coalesce(sum(length(p.outcome)), '') || ':' || coalesce(sum(length(p.reason)), '')
             || ':' || coalesce(sum(p.rules_version), '')
             FROM proposals p WHERE p.episode_id = e.id)
  || '|' || (SELECT count(*) || ':' || coalesce(max(c.observed_at), '') || ':'
             || coalesce(sum(length(c.reason)), '') || ':' || coalesce(sum(c.late_seconds), '')
             FROM proposals p JOIN checkpoints c ON c.proposal_id = p.id
             WHERE p.episode_id = e.id AND c.observed_at IS NOT NULL)
  || '|' || (SELECT count(*) || ':' || coalesce(sum(length(t.seen_by)), '') || ':'
             || coalesce(sum(t.shell_exit_code), '') || ':' || coalesce(sum(t.exit_code), '')
             || ':' || coalesce(sum(t.passed), '') || ':' || coalesce(sum(t.failed), '')
             || ':' || coalesce(sum(t.errors), '') || ':' || coalesce(sum(t.skipped), '')
             FROM episode_test_runs l JOIN test_runs t ON t.id = l.test_run_id
             WHERE l.episode_id = e.id) AS fingerprint,
  s.fingerprint AS seen
FROM episodes e JOIN workspaces w ON w.id = e.workspace_id
LEFT JOIN sync_episodes s ON s.episode_id = e.id
WHERE e.settled_at IS NOT NULL
"""


def fingerprints(conn: sqlite3.Connection) -> Iterator[tuple[str, str, str, str | None]]:
    """(episode id, workspace root, fingerprint now, fingerprint when last projected or None)
    of every settled episode, read as the caller iterates."""
    rows: Iterator[tuple[str, str, str, str | None]] = sync_tables(conn).execute(_FINGERPRINTS)
    return rows


def roots(conn: sqlite3.Connection, episode_ids: Sequence[str]) -> dict[str, str]:
    """Episode id -> its workspace's root."""
    out: dict[str, str] = {}
    for i in range(0, len(episode_ids), 500):
        chunk = list(episode_ids[i : i + 500])
        marks = ",".join("?" * len(chunk))
        out.update(
            conn.execute(
                f"""SELECT e.id, w.root FROM episodes e JOIN workspaces w
                    ON w.id = e.workspace_id WHERE e.id IN ({marks})""",
                chunk,
            ).fetchall()
        )
    return out


def mark_projected(conn: sqlite3.Connection, seen: Iterable[tuple[str, str, str, int]]) -> None:
    """(episode id, fingerprint, content hash, revision) of each episode just projected."""
    sync_tables(conn).executemany(
        """INSERT INTO sync_episodes (episode_id, fingerprint, content_hash, revision)
           VALUES (?, ?, ?, ?) ON CONFLICT (episode_id) DO UPDATE SET
           fingerprint = excluded.fingerprint, content_hash = excluded.content_hash,
           revision = excluded.revision""",
        seen,
    )


def episode_place(conn: sqlite3.Connection, episode_id: str) -> tuple[float | None, str | None]:
    """(settled at, workspace root) of an episode; `LookupError` when there is none."""
    row = conn.execute(
        """SELECT e.settled_at, w.root FROM episodes e LEFT JOIN workspaces w
           ON w.id = e.workspace_id WHERE e.id = ?""",
        (episode_id,),
    ).fetchone()
    if row is None:
        raise LookupError(episode_id)
    return row[0], row[1]


def workspace_roots(conn: sqlite3.Connection) -> list[str]:
    """The root of every workspace the store knows."""
    return [r[0] for r in conn.execute("SELECT root FROM workspaces")]
