"""Explicit decisions (an agent's telemetry saying who accepted or rejected a tool call) applied
to the proposals they are about.

A decision names the agent's call id; the call's proposals carry it in their dedupe key. What it
finds decides what it does: a recorded proposal gets the decision's source as its `decided_by`
(an explicit answer overrides the one inferred from a pre-tool-use call with no post-tool-use);
a shown proposal is accepted or rejected; an edit only announced (a pre-tool-use call) is
recorded rejected at once when the decision is a reject. A decision that finds nothing waits
for its call's edit (`settle_waiting`, called by the hooks' ingest)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

from capture.edits.hunks import LocatedHunk
from capture.files import relative_to_workspace
from capture.model import State
from capture.store.decision_rows import (
    DecisionRow,
    add_decision,
    link_decision,
    pending_keys_of_call,
    proposals_of_call,
    set_decided_by,
    waiting_decisions,
)
from capture.store.hook_rows import drop_pending, pending_proposal

if TYPE_CHECKING:
    from capture.recording.recorder import Recorder

__all__ = ["apply_decision", "record_decision", "settle_waiting"]


def record_decision(recorder: Recorder, row: DecisionRow, *, now: float) -> str | None:
    """Log one decision and apply it; returns the proposal it was linked to, if any."""
    store = recorder.store
    payload = {k: v for k, v in dataclasses.asdict(row).items() if k not in ("id", "proposal_id")}
    with store.transaction():
        recorder.event("decision", json.dumps(payload), at=now, source=f"{row.origin}:{row.agent}")
        proposal_id = apply_decision(recorder, row, now=now) if row.call_id else None
        add_decision(store.conn, dataclasses.replace(row, proposal_id=proposal_id))
    return proposal_id


def apply_decision(recorder: Recorder, row: DecisionRow, *, now: float) -> str | None:
    """Apply a decision to its call's proposals (or its announced edits); the first proposal's
    id, or None when the call has none yet."""
    conn = recorder.store.conn
    assert row.call_id is not None
    existing = proposals_of_call(conn, row.agent, row.call_id)
    accepted = row.decision != "reject"
    for proposal_id, state in existing:
        if state == State.SHOWN.value:
            recorder.decision(proposal_id, accepted=accepted, decided_by=row.source, now=now)
        elif (state == State.REJECTED.value) != accepted:
            set_decided_by(conn, proposal_id, row.source)
    if existing:
        return existing[0][0]
    if accepted:
        return None  # the post-tool-use call records the edit, and links this decision
    rejected = [
        _reject_announced(recorder, key, row.source, now)
        for key in pending_keys_of_call(conn, row.agent, row.call_id)
    ]
    return next((r for r in rejected if r is not None), None)


def _reject_announced(recorder: Recorder, key: str, source: str | None, now: float) -> str | None:
    conn = recorder.store.conn
    proposal = pending_proposal(conn, key)
    if proposal is None:
        return None
    drop_pending(conn, key)
    relative = relative_to_workspace(Path(proposal.path), Path(proposal.workspace))
    if relative is None:
        return None
    proposal.state = State.REJECTED
    proposal.decided_by = source
    proposal.dedupe_key = proposal.dedupe_key or key
    located = [LocatedHunk(h.old_text, h.new_text, None) for h in proposal.hunks]
    return recorder.edit(proposal, located, relative=relative, now=now)


def settle_waiting(recorder: Recorder, key: str, *, now: float) -> None:
    """Apply the decisions that arrived before the edit keyed `agent:call-id:path` was recorded
    or announced."""
    agent, _, rest = key.partition(":")
    call_id = rest.partition(":")[0]
    if not call_id:
        return
    conn = recorder.store.conn
    for row in waiting_decisions(conn, agent, call_id):
        proposal_id = apply_decision(recorder, row, now=now)
        if proposal_id is not None and row.id is not None:
            link_decision(conn, row.id, proposal_id)
