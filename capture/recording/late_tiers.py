"""Tiers recomputed: the facts of each episode gathered from the store, the rules applied
(`capture.tiers.rules`), each change kept in the tier history (`capture.store.tier_rows`).

Called after a late pass (for the episodes whose proposals it measured) and after `capture
observe` settles proposals; `recompute_tiers` with no ids recomputes every episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from capture.store import tier_rows
from capture.store.database import Store
from capture.store.episodes import load_episodes
from capture.store.followup_rows import followups_of
from capture.store.late_signal_rows import late_signals
from capture.store.tier_rows import record_tier
from capture.tiers.rules import EpisodeFacts, ProposalFacts, decide_episode, decide_proposal

__all__ = ["TierReport", "episodes_of", "recompute_tiers", "untiered_episodes"]


@dataclass(slots=True)
class TierReport:
    episodes: int = 0
    changed: int = 0  # tier decisions written (proposals and episodes)


def episodes_of(store: Store, proposal_ids: Sequence[str]) -> list[str]:
    """The episodes these proposals belong to."""
    return store.episodes_of(proposal_ids)


def untiered_episodes(store: Store) -> list[str]:
    """Settled episodes that have no tier yet (rejected-only episodes settle without a
    checkpoint; stores from before the tiers)."""
    return tier_rows.untiered_episodes(store.conn)


def _quarantined(store: Store) -> set[str]:
    """Episodes the privacy layer quarantined (sync's anonymizer found what it could not scrub)."""
    return tier_rows.quarantined_episodes(store.conn)


def _tests_passed(tests: dict) -> bool:
    last = tests.get("last_run_before_settling") or tests.get("first_run_after")
    return bool(last and last.get("status") == "passing")


def recompute_tiers(store: Store, episode_ids: Sequence[str] | None, *, now: float) -> TierReport:
    """Decide the tier of each episode (of every one when `episode_ids` is None) and of its
    proposals; keep each decision that changed."""
    report = TierReport()
    if episode_ids is not None and not episode_ids:
        return report
    quarantined = _quarantined(store)
    ids = None if episode_ids is None else list(episode_ids)
    for i in range(0, len(ids) if ids is not None else 1, 200):
        chunk = None if ids is None else ids[i : i + 200]
        episodes = load_episodes(store, ids=chunk)
        late = late_signals(store.conn, [p["id"] for e in episodes for p in e["proposals"]])
        followed = followups_of(store.conn, [e["id"] for e in episodes])
        with store.transaction() as conn:
            for episode in episodes:
                report.episodes += 1
                tests = episode["tests"]
                flagged = episode["id"] in quarantined
                decisions = []
                for p in episode["proposals"]:
                    facts = ProposalFacts(
                        state=p["state"],
                        outcome=p["outcome"],
                        path=p["file"],
                        hunks=tuple((h["old_text"], h["new_text"]) for h in p["hunks"]),
                        outcome_reason=p["reason"],
                        late=late.get(p["id"]),
                        tests_passed=_tests_passed(tests),
                        tests_edited_by_agent=bool(tests["tests_edited_by_agent"]),
                        quarantined=flagged,
                        now=now,
                    )
                    decision = decide_proposal(facts)
                    decisions.append(decision)
                    if decision is not None and record_tier(
                        conn, "proposal", p["id"], decision, now
                    ):
                        report.changed += 1
                verdict = decide_episode(
                    EpisodeFacts(
                        proposals=tuple(decisions),
                        quarantined=flagged,
                        tests_edited_by_agent=bool(tests["tests_edited_by_agent"]),
                        followed_by_dissatisfied=(
                            episode["id"] in followed
                            and followed[episode["id"]].label == "dissatisfied"
                        ),
                    )
                )
                if verdict is not None and record_tier(
                    conn, "episode", episode["id"], verdict, now
                ):
                    report.changed += 1
    return report
