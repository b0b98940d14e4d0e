"""The forge's verdict in the tier rules: what a pull request's review, merge and CI make of an
episode's tier, where the forge knows (an episode whose lines no pull request held keeps its
tier).

Additive to the table in `capture.tiers.rules`: it reads the decision those rules made and
lowers it, never raises it. Applied where the forge's deliveries are, at the team collector.

- lines in a pull request closed without merge: `rejected`;
- lines rewritten in review (any share changed between the first revision holding them and the
  merge): `edited`, reason `review`;
- merged unchanged but CI failed at the final head: `gold` becomes `silver`;
- in a pull request not merged yet: `gold` becomes `silver` (gold needs the merge).
"""

from __future__ import annotations

from dataclasses import dataclass

from capture.tiers.model import Tier, TierDecision

__all__ = [
    "FORGE_REASONS",
    "REASON_CI_FAILED",
    "REASON_CLOSED",
    "REASON_NOT_MERGED",
    "REASON_REVIEW",
    "ForgeFacts",
    "apply_forge",
]

REASON_REVIEW = "review"
REASON_CLOSED = "pull request closed without merge"
REASON_CI_FAILED = "CI failed at the pull request's final head"
REASON_NOT_MERGED = "pull request not merged yet"
FORGE_REASONS = frozenset({REASON_REVIEW, REASON_CLOSED, REASON_CI_FAILED, REASON_NOT_MERGED})

_POSITIVE = {Tier.GOLD, Tier.SILVER, Tier.EDITED}


@dataclass(frozen=True, slots=True)
class ForgeFacts:
    in_pr: bool
    merged: bool = False
    closed_unmerged: bool = False
    changed_in_review: float | None = None
    ci: str | None = None  # success | failure | pending | None (no CI ran)


def apply_forge(decision: TierDecision | None, f: ForgeFacts) -> TierDecision | None:
    """The decision with the forge's verdict applied (the same decision when it says nothing)."""
    if decision is None or not f.in_pr or decision.tier not in _POSITIVE:
        return decision
    version = decision.rules_version
    if f.closed_unmerged:
        return TierDecision(Tier.REJECTED, (REASON_CLOSED,), version)
    if f.merged and f.changed_in_review:
        return TierDecision(Tier.EDITED, (REASON_REVIEW,), version)
    if decision.tier is not Tier.GOLD:
        return decision
    if not f.merged:
        return TierDecision(Tier.SILVER, (REASON_NOT_MERGED,), version)
    if f.ci == "failure":
        return TierDecision(Tier.SILVER, (REASON_CI_FAILED,), version)
    return decision
