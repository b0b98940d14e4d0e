"""Tiers recomputed from the store: the facts gathered, each change kept once."""

from __future__ import annotations

from pathlib import Path

from capture.recording.late_tiers import recompute_tiers, untiered_episodes
from capture.store.database import Store
from capture.store.late_signal_rows import late_signals, write_late_signals
from capture.store.tier_rows import current_tiers, tier_history
from capture.tiers.late_signals import LateSignals
from capture.tiers.model import Tier
from sync.store.schema import sync_tables

DAY = 86400.0


def store_with(tmp_path: Path, *proposals: tuple[str, str, str, str]) -> Store:
    """One episode per (episode id, proposal id, state, outcome)."""
    store = Store.open(tmp_path / "c.db")
    conn = store.conn
    with store.transaction():
        conn.execute("INSERT INTO workspaces (root, created_at) VALUES ('/ws', 0)")
        for eid, pid, state, outcome in proposals:
            conn.execute(
                "INSERT OR IGNORE INTO episodes (id, workspace_id, agent, started_at, last_at, "
                "settled_at) VALUES (?, 1, 'codex', 1, 1, 2)",
                (eid,),
            )
            conn.execute(
                "INSERT INTO proposals (id, episode_id, workspace_id, path, agent, state, "
                "outcome, created_at, applied_at, settled_at) "
                "VALUES (?, ?, 1, 'calc.py', 'codex', ?, ?, 1, ?, 2)",
                (pid, eid, state, outcome, 1 if state == "applied" else None),
            )
            conn.execute(
                "INSERT INTO hunks (proposal_id, idx, old_text, new_text) "
                "VALUES (?, 0, 'return 0', 'return sum(items)')",
                (pid,),
            )
    return store


def test_late_signals_round_trip_through_their_table(tmp_path: Path) -> None:
    store = store_with(tmp_path, ("e1", "p1", "applied", "kept"))
    signals = LateSignals(
        measured_at=5 * DAY, lines=3, committed=3, commit="c" * 40, committed_at=DAY,
        churn_14d=0.5, churn_30d=1.0, days_observed=4.0, reverted_by="r" * 40,
        reverted_at=3 * DAY, revert_kind="lines back", syntax_errors_added=None,
        markers_added=2, file_gone=False,
    )  # fmt: skip
    with store.transaction() as conn:
        write_late_signals(conn, [("p1", signals)])
    assert late_signals(store.conn, ["p1", "p2"]) == {"p1": signals}


def test_a_revert_turns_silver_into_debt_once_and_the_history_keeps_both(tmp_path: Path) -> None:
    store = store_with(tmp_path, ("e1", "p1", "applied", "kept"))
    recompute_tiers(store, ["e1"], now=10.0)
    assert current_tiers(store.conn, "episode")["e1"].tier == Tier.SILVER
    reverted = LateSignals(
        measured_at=9 * DAY, lines=1, committed=1, commit="c" * 40, committed_at=DAY,
        churn_14d=1.0, churn_30d=1.0, days_observed=8.0, reverted_by="r" * 40,
        reverted_at=8 * DAY, revert_kind="revert commit",
    )  # fmt: skip
    with store.transaction() as conn:
        write_late_signals(conn, [("p1", reverted)])
    first = recompute_tiers(store, ["e1"], now=9 * DAY)
    again = recompute_tiers(store, ["e1"], now=10 * DAY)
    assert (first.changed, again.changed) == (2, 0)
    history = tier_history(store.conn, "proposal", "p1")
    assert [(c.decision.tier, c.decision.reasons, c.decided_at) for c in history] == [
        (Tier.SILVER, history[0].decision.reasons, 10.0),
        (Tier.DEBT, ("reverted",), 9 * DAY),
    ]


def test_the_privacy_layers_quarantine_is_read_from_the_sync_outbox(tmp_path: Path) -> None:
    store = store_with(tmp_path, ("e1", "p1", "applied", "kept"), ("e2", "p2", "applied", "kept"))
    with store.transaction() as conn:
        sync_tables(conn).execute(
            "INSERT INTO sync_outbox (episode_id, revision, level, content_hash, state, "
            "created_at) VALUES ('e1', 1, 'redacted', 'h', 'quarantined', 0)"
        )
    recompute_tiers(store, None, now=10.0)
    episodes = current_tiers(store.conn, "episode")
    assert episodes["e1"].tier == Tier.QUARANTINE
    assert current_tiers(store.conn, "proposal")["p1"].tier == Tier.QUARANTINE
    assert episodes["e2"].tier == Tier.SILVER


def test_settled_episodes_without_a_tier_are_found(tmp_path: Path) -> None:
    store = store_with(
        tmp_path, ("e1", "p1", "rejected", "rejected"), ("e2", "p2", "applied", "kept")
    )
    assert sorted(untiered_episodes(store)) == ["e1", "e2"]
    recompute_tiers(store, ["e1"], now=10.0)
    assert untiered_episodes(store) == ["e2"]
    assert current_tiers(store.conn, "episode")["e1"].tier == Tier.REJECTED
