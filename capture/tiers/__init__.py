"""Quality tiers: what each proposal and episode is worth as training signal.

`model` holds the words (`Tier`, `TierDecision`); `rules` the one versioned rule table that
decides them, and `late_signals` what the late signals it reads mean. A decision is a plain
value; `capture.store.tier_rows` keeps every decision with its time, so a tier's history
survives recomputation. May import `capture.errors`, `capture.model` and `capture.edits` only:
every fact a rule reads is handed to it as a plain value.
"""

from capture.tiers.model import SUBJECTS, Tier, TierDecision

__all__ = ["SUBJECTS", "Tier", "TierDecision"]
