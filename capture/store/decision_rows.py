"""Explicit decisions an agent's telemetry reported (accept, reject, modify, and who decided),
kept beside the proposals they are about: a decision arriving before its edit is recorded waits
here, keyed by the agent and its call id, and is linked to the proposal once one exists.

A proposal recorded from an agent hook carries a dedupe key `agent:call-id:path`, so the
proposals and pending edits of one call are found by that prefix."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from capture.connection import sqlite3

__all__ = [
    "DECISION_STATEMENTS",
    "DecisionFigures",
    "DecisionRow",
    "add_decision",
    "decision_figures",
    "decisions_of_proposals",
    "link_decision",
    "pending_keys_of_call",
    "proposals_of_call",
    "set_decided_by",
    "waiting_decisions",
]

DECISION_STATEMENTS = [
    """CREATE TABLE IF NOT EXISTS decisions (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        session_id TEXT,
        call_id TEXT,
        tool TEXT,
        decision TEXT NOT NULL,
        source TEXT,
        explicit INTEGER NOT NULL,
        origin TEXT NOT NULL,
        at REAL NOT NULL,
        proposal_id TEXT REFERENCES proposals(id)
    )""",
    "CREATE INDEX IF NOT EXISTS decisions_call ON decisions(agent, call_id)",
    "CREATE INDEX IF NOT EXISTS decisions_proposal ON decisions(proposal_id)",
]


@dataclass(frozen=True, slots=True)
class DecisionRow:
    agent: str
    session_id: str | None
    call_id: str | None
    tool: str | None
    decision: str
    source: str | None
    explicit: bool
    origin: str
    at: float
    proposal_id: str | None = None
    id: int | None = None


def _prefix(agent: str, call_id: str) -> str:
    escaped = call_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    agent_escaped = agent.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{agent_escaped}:{escaped}:%"


def add_decision(conn: sqlite3.Connection, row: DecisionRow) -> int:
    cursor = conn.execute(
        """INSERT INTO decisions (agent, session_id, call_id, tool, decision, source, explicit,
           origin, at, proposal_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            row.agent,
            row.session_id,
            row.call_id,
            row.tool,
            row.decision,
            row.source,
            int(row.explicit),
            row.origin,
            row.at,
            row.proposal_id,
        ),
    )
    return int(cursor.lastrowid or 0)


def link_decision(conn: sqlite3.Connection, decision_id: int, proposal_id: str) -> None:
    conn.execute("UPDATE decisions SET proposal_id = ? WHERE id = ?", (proposal_id, decision_id))


def proposals_of_call(conn: sqlite3.Connection, agent: str, call_id: str) -> list[tuple[str, str]]:
    """(id, state) of the proposals recorded for one call of an agent."""
    rows = conn.execute(
        "SELECT id, state FROM proposals WHERE dedupe_key LIKE ? ESCAPE '\\' ORDER BY created_at",
        (_prefix(agent, call_id),),
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def pending_keys_of_call(conn: sqlite3.Connection, agent: str, call_id: str) -> list[str]:
    """The keys of the edits a pre-tool-use hook announced for one call, not resolved yet."""
    rows = conn.execute(
        "SELECT key FROM hook_pending WHERE agent = ? AND key LIKE ? ESCAPE '\\'",
        (agent, _prefix(agent, call_id)),
    ).fetchall()
    return [str(r[0]) for r in rows]


def waiting_decisions(conn: sqlite3.Connection, agent: str, call_id: str) -> list[DecisionRow]:
    """The decisions on one call not linked to a proposal yet, oldest first."""
    rows = conn.execute(
        """SELECT id, agent, session_id, call_id, tool, decision, source, explicit, origin, at
           FROM decisions WHERE agent = ? AND call_id = ? AND proposal_id IS NULL
           ORDER BY at, id""",
        (agent, call_id),
    ).fetchall()
    return [
        DecisionRow(
            agent=r[1],
            session_id=r[2],
            call_id=r[3],
            tool=r[4],
            decision=r[5],
            source=r[6],
            explicit=bool(r[7]),
            origin=r[8],
            at=float(r[9]),
            id=int(r[0]),
        )
        for r in rows
    ]


def set_decided_by(conn: sqlite3.Connection, proposal_id: str, decided_by: str | None) -> None:
    conn.execute("UPDATE proposals SET decided_by = ? WHERE id = ?", (decided_by, proposal_id))


def decisions_of_proposals(
    conn: sqlite3.Connection, proposal_ids: Iterable[str]
) -> dict[str, list[DecisionRow]]:
    """Each proposal's explicit decisions, oldest first (proposals with none left out)."""
    ids = list(proposal_ids)
    out: dict[str, list[DecisionRow]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"""SELECT id, agent, session_id, call_id, tool, decision, source, explicit, origin,
                at, proposal_id FROM decisions WHERE proposal_id IN ({marks}) ORDER BY at, id""",
            chunk,
        ).fetchall()
        for r in rows:
            out.setdefault(str(r[10]), []).append(
                DecisionRow(
                    agent=r[1],
                    session_id=r[2],
                    call_id=r[3],
                    tool=r[4],
                    decision=r[5],
                    source=r[6],
                    explicit=bool(r[7]),
                    origin=r[8],
                    at=float(r[9]),
                    proposal_id=str(r[10]),
                    id=int(r[0]),
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class DecisionFigures:
    """Over the proposals created in a period: how many were applied, how many of those a
    person approved explicitly, and the count of each (decision, source, explicit)."""

    applied: int
    applied_explicit: int
    by_source: tuple[tuple[str, str, bool, int], ...]


def decision_figures(conn: sqlite3.Connection, since: float, until: float) -> DecisionFigures:
    applied, explicit = conn.execute(
        """SELECT count(*), sum(EXISTS (SELECT 1 FROM decisions d WHERE d.proposal_id = p.id
                                        AND d.explicit = 1 AND d.decision != 'reject'))
           FROM proposals p WHERE p.state = 'applied' AND p.created_at >= ?
           AND p.created_at < ?""",
        (since, until),
    ).fetchone()
    rows = conn.execute(
        """SELECT d.decision, coalesce(d.source, ''), d.explicit, count(*) FROM decisions d
           WHERE d.at >= ? AND d.at < ? GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2""",
        (since, until),
    ).fetchall()
    return DecisionFigures(
        int(applied or 0),
        int(explicit or 0),
        tuple((str(r[0]), str(r[1]), bool(r[2]), int(r[3])) for r in rows),
    )
