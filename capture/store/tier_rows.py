"""The tier history: every decision kept, the newest one per subject being its current tier.

A decision is written only when it differs from the subject's current one, so recomputing tiers
that did not change adds nothing. Also what tiers are read for: the tier mix of a period, the
settled episodes not tiered yet, and those sync's outbox quarantined.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from capture.connection import sqlite3
from capture.tiers.model import SUBJECTS, Tier, TierDecision

__all__ = [
    "TierChange",
    "current_tiers",
    "proposal_tier_counts",
    "quarantined_episodes",
    "record_tier",
    "tier_histories",
    "tier_history",
    "untiered_episodes",
]


@dataclass(frozen=True, slots=True)
class TierChange:
    """One entry of a subject's tier history."""

    decision: TierDecision
    decided_at: float


def _decision(row: sqlite3.Row | tuple[str, str, int]) -> TierDecision:
    tier, reasons, rules_version = row[0], row[1], row[2]
    return TierDecision(Tier(tier), tuple(json.loads(reasons)), int(rules_version))


def _check_subject(subject: str) -> None:
    if subject not in SUBJECTS:
        raise ValueError(f"tier subject must be one of {', '.join(SUBJECTS)}, not {subject!r}")


def current_tiers(
    conn: sqlite3.Connection, subject: str, ids: Iterable[str] | None = None
) -> dict[str, TierDecision]:
    """The current tier of each subject (of `ids`, or of every subject that has one)."""
    _check_subject(subject)
    sql = (
        "SELECT subject_id, tier, reasons, rules_version FROM tier_history t "
        "WHERE subject = ? AND id = (SELECT MAX(id) FROM tier_history u "
        "WHERE u.subject = t.subject AND u.subject_id = t.subject_id)"
    )
    out: dict[str, TierDecision] = {}
    if ids is None:
        for row in conn.execute(sql, (subject,)):
            out[row[0]] = _decision(row[1:])
        return out
    # Given ids are looked up through the (subject, subject_id, id) index, a chunk at a time:
    # the cost is that of the ids asked for, not of the whole history (an export asks a page
    # at a time).
    wanted = list(dict.fromkeys(ids))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"{sql} AND subject_id IN ({marks})", (subject, *chunk)):
            out[row[0]] = _decision(row[1:])
    return out


def tier_history(conn: sqlite3.Connection, subject: str, subject_id: str) -> list[TierChange]:
    """Every decision for one subject, oldest first."""
    _check_subject(subject)
    rows = conn.execute(
        "SELECT tier, reasons, rules_version, decided_at FROM tier_history "
        "WHERE subject = ? AND subject_id = ? ORDER BY id",
        (subject, subject_id),
    )
    return [TierChange(_decision(row[:3]), float(row[3])) for row in rows]


def tier_histories(
    conn: sqlite3.Connection, subject: str, subject_ids: Iterable[str]
) -> dict[str, list[TierChange]]:
    """Every decision for each of these subjects, oldest first (subjects with none left out)."""
    _check_subject(subject)
    ids = list(subject_ids)
    out: dict[str, list[TierChange]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        rows = conn.execute(
            "SELECT subject_id, tier, reasons, rules_version, decided_at FROM tier_history "
            f"WHERE subject = ? AND subject_id IN ({','.join('?' * len(chunk))}) ORDER BY id",
            (subject, *chunk),
        )
        for row in rows:
            out.setdefault(row[0], []).append(TierChange(_decision(row[1:4]), float(row[4])))
    return out


def record_tier(
    conn: sqlite3.Connection, subject: str, subject_id: str, decision: TierDecision, at: float
) -> bool:
    """Keep `decision` as the subject's current tier unless it already is; True if written.

    Runs inside the caller's transaction (it does not begin one)."""
    _check_subject(subject)
    row = conn.execute(
        "SELECT tier, reasons, rules_version FROM tier_history "
        "WHERE subject = ? AND subject_id = ? ORDER BY id DESC LIMIT 1",
        (subject, subject_id),
    ).fetchone()
    if row is not None and _decision(row) == decision:
        return False
    conn.execute(
        "INSERT INTO tier_history (subject, subject_id, tier, reasons, rules_version, decided_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            subject,
            subject_id,
            decision.tier.value,
            json.dumps(list(decision.reasons)),
            decision.rules_version,
            at,
        ),
    )
    return True


def proposal_tier_counts(
    conn: sqlite3.Connection, since: float, until: float, workspace_id: int | None
) -> list[tuple[str, str, str, int]]:
    """(agent, model or '', current tier, proposals) over the proposals created in
    [since, until), of one workspace or all (None)."""
    sql = """SELECT p.agent, COALESCE(p.model, ''), t.tier, COUNT(*)
        FROM proposals p JOIN tier_history t ON t.subject = 'proposal' AND t.subject_id = p.id
        WHERE t.id = (SELECT MAX(u.id) FROM tier_history u
                      WHERE u.subject = 'proposal' AND u.subject_id = p.id)
          AND p.created_at >= ? AND p.created_at < ?"""
    params: list[object] = [since, until]
    if workspace_id is not None:
        sql += " AND p.workspace_id = ?"
        params.append(workspace_id)
    sql += " GROUP BY 1, 2, 3"
    return [(r[0], r[1], r[2], int(r[3])) for r in conn.execute(sql, params)]


def untiered_episodes(conn: sqlite3.Connection) -> list[str]:
    """Settled episodes that have no tier yet."""
    rows = conn.execute(
        "SELECT e.id FROM episodes e WHERE e.settled_at IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM tier_history t WHERE t.subject = 'episode' AND t.subject_id = e.id)"
    )
    return [r[0] for r in rows]


def quarantined_episodes(conn: sqlite3.Connection) -> set[str]:
    """Episodes the privacy layer quarantined (sync's outbox holds a revision it could not
    scrub); none on a store without sync's tables."""
    try:
        rows = conn.execute(
            "SELECT DISTINCT episode_id FROM sync_outbox WHERE state = 'quarantined'"
        )
    except Exception:  # noqa: BLE001 - a store without the sync tables has no flag
        return set()
    return {r[0] for r in rows}
