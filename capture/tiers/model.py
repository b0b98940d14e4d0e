"""The tier words: one `Tier` per proposal or episode, decided with reasons by a rules version."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["SUBJECTS", "Tier", "TierDecision"]

#: what a tier is decided for
SUBJECTS = ("proposal", "episode")


class Tier(StrEnum):
    """Training-use tiers, best first. Documented with their rules beside the rule table."""

    GOLD = "gold"
    SILVER = "silver"
    EDITED = "edited"
    REJECTED = "rejected"
    UNDONE = "undone"
    DEBT = "debt"
    NOISE = "noise"
    QUARANTINE = "quarantine"


@dataclass(frozen=True, slots=True)
class TierDecision:
    """A tier, why (one reason string per rule that decided it), and the rules that decided."""

    tier: Tier
    reasons: tuple[str, ...]
    rules_version: int
