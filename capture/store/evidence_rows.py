"""What the report needs to say which evidence the labels of a period rest on: each proposal's
label inputs (its row and the checkpoint that decided it), counted by their distinct values.
The kind itself is decided by `capture.edits.evidence.label_of`."""

from __future__ import annotations

from capture.connection import sqlite3

__all__ = ["LabelInputs", "label_input_counts"]

#: (state, outcome, reason, backfilled, author, evidence, via, late_seconds, proposals)
LabelInputs = tuple[
    str, str, str | None, bool, str | None, str | None, str | None, float | None, int
]


def label_input_counts(
    conn: sqlite3.Connection, since: float, until: float, workspace_id: int | None
) -> list[LabelInputs]:
    """The label inputs of the proposals created in [since, until), of one workspace or all
    (None). The deciding checkpoint is the longest window observed with the proposal's
    outcome."""
    deciding = """(SELECT c.{col} FROM checkpoints c WHERE c.proposal_id = p.id
        AND c.observed_at IS NOT NULL AND c.outcome = p.outcome
        ORDER BY c.window_seconds DESC LIMIT 1)"""
    sql = f"""SELECT p.state, p.outcome, p.reason, p.backfilled, p.author, p.evidence,
        {deciding.format(col="via")}, {deciding.format(col="late_seconds")}, COUNT(*)
        FROM proposals p WHERE p.created_at >= ? AND p.created_at < ?"""
    params: list[object] = [since, until]
    if workspace_id is not None:
        sql += " AND p.workspace_id = ?"
        params.append(workspace_id)
    sql += " GROUP BY 1, 2, 3, 4, 5, 6, 7, 8"
    return [
        (r[0], r[1], r[2], bool(r[3]), r[4], r[5], r[6], r[7], int(r[8]))
        for r in conn.execute(sql, params)
    ]
