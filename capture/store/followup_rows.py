"""The follow-up of an episode: how the user's next prompt read (capture.followups), kept per
episode with the rule that fired, and the figures the report gives from them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from capture.connection import sqlite3

__all__ = [
    "FOLLOWUP_STATEMENTS",
    "FollowUpRow",
    "FollowUpShare",
    "followup_shares",
    "followups_of",
    "predecessor_episode",
    "record_followup",
]

FOLLOWUP_STATEMENTS = [
    """CREATE TABLE IF NOT EXISTS followups (
        episode_id TEXT PRIMARY KEY REFERENCES episodes(id),
        next_episode_id TEXT REFERENCES episodes(id),
        label TEXT NOT NULL,
        rule TEXT NOT NULL,
        rules_version INTEGER NOT NULL,
        at REAL NOT NULL
    )""",
]


@dataclass(frozen=True, slots=True)
class FollowUpRow:
    label: str
    rule: str
    rules_version: int
    next_episode_id: str | None
    at: float


@dataclass(frozen=True, slots=True)
class FollowUpShare:
    """Per agent and model: episodes followed by a prompt, and how many of those prompts were
    corrections or dissatisfied."""

    agent: str
    model: str | None
    followed: int
    corrections: int
    dissatisfied: int


def predecessor_episode(conn: sqlite3.Connection, episode_id: str) -> str | None:
    """The episode the same agent had before this one in the same session (or, without a
    session, in the same workspace): the one a prompt opening `episode_id` follows."""
    row = conn.execute(
        "SELECT workspace_id, agent, session_id, started_at FROM episodes WHERE id = ?",
        (episode_id,),
    ).fetchone()
    if row is None:
        return None
    workspace_id, agent, session_id, started_at = row
    if session_id:
        found = conn.execute(
            """SELECT id FROM episodes WHERE agent = ? AND session_id = ? AND id != ?
               AND started_at <= ? ORDER BY started_at DESC, id DESC LIMIT 1""",
            (agent, session_id, episode_id, started_at),
        ).fetchone()
    else:
        found = conn.execute(
            """SELECT id FROM episodes WHERE agent = ? AND workspace_id IS ? AND id != ?
               AND started_at <= ? ORDER BY started_at DESC, id DESC LIMIT 1""",
            (agent, workspace_id, episode_id, started_at),
        ).fetchone()
    return None if found is None else str(found[0])


def record_followup(conn: sqlite3.Connection, episode_id: str, row: FollowUpRow) -> bool:
    """Keep the first follow-up of an episode; True if this one was kept."""
    cursor = conn.execute(
        """INSERT OR IGNORE INTO followups (episode_id, next_episode_id, label, rule,
           rules_version, at) VALUES (?, ?, ?, ?, ?, ?)""",
        (episode_id, row.next_episode_id, row.label, row.rule, row.rules_version, row.at),
    )
    return cursor.rowcount > 0


def followups_of(conn: sqlite3.Connection, episode_ids: Iterable[str]) -> dict[str, FollowUpRow]:
    ids = list(episode_ids)
    out: dict[str, FollowUpRow] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(
            f"""SELECT episode_id, label, rule, rules_version, next_episode_id, at
                FROM followups WHERE episode_id IN ({marks})""",
            chunk,
        ):
            out[str(r[0])] = FollowUpRow(r[1], r[2], int(r[3]), r[4], float(r[5]))
    return out


def followup_shares(
    conn: sqlite3.Connection, since: float | None = None, until: float | None = None
) -> list[FollowUpShare]:
    """Per agent and model, over the episodes started in [since, until)."""
    rows = conn.execute(
        """SELECT e.agent, e.model, count(*),
                  sum(f.label = 'correction'), sum(f.label = 'dissatisfied')
           FROM followups f JOIN episodes e ON e.id = f.episode_id
           WHERE e.started_at >= ? AND e.started_at < ?
           GROUP BY e.agent, e.model ORDER BY e.agent, e.model""",
        (
            since if since is not None else float("-inf"),
            until if until is not None else float("inf"),
        ),
    ).fetchall()
    return [FollowUpShare(r[0], r[1], int(r[2]), int(r[3] or 0), int(r[4] or 0)) for r in rows]
