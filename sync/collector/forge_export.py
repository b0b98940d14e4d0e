"""The team export with the forge's verdict: each episode whose committed lines a pull request
held gets a `forge` block (`ForgeVerdict`) and its tier as the forge's rules leave it
(`capture.tiers.forge`); the tier its uploader decided is kept in `forge.tier_before`. Each of
its proposals gets the verdict on its own lines in the same way (the training rows are built
from the proposals' tiers); the tiers they had are kept in `forge.proposal_tiers_before`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from capture.tiers.forge import ForgeFacts, apply_forge
from capture.tiers.model import Tier, TierDecision
from sync.collector.forge_link import ForgeIndex, ForgeVerdict, episode_lines, verdict

__all__ = ["episode_verdict", "with_forge"]


def _decision(tier: Any) -> TierDecision | None:
    if not isinstance(tier, dict) or tier.get("tier") not in set(Tier):
        return None
    reasons = tuple(r for r in tier.get("reasons") or () if isinstance(r, str))
    version = tier.get("rules_version")
    return TierDecision(Tier(tier["tier"]), reasons, version if isinstance(version, int) else 0)


def episode_verdict(index: ForgeIndex, episode: dict[str, Any]) -> ForgeVerdict:
    return verdict(index, episode_lines(episode), full=episode.get("level") == "full")


def _facts(found: ForgeVerdict) -> ForgeFacts:
    return ForgeFacts(
        in_pr=found.in_pr,
        merged=bool(found.merged),
        closed_unmerged=found.closed_unmerged,
        changed_in_review=found.changed_in_review,
        ci=found.ci,
    )


def _applied(subject: dict[str, Any], found: ForgeVerdict) -> Any:
    """Apply the verdict to the subject's tier; the tier it had when it changed, else None."""
    before = subject.get("tier")
    decided = _decision(before)
    after = apply_forge(decided, _facts(found))
    if after is None or after == decided:
        return None
    subject["tier"] = {
        "tier": after.tier.value,
        "reasons": list(after.reasons),
        "rules_version": after.rules_version,
        "decided_at": before.get("decided_at") if isinstance(before, dict) else None,
    }
    return before


def with_forge(episodes: Iterable[dict[str, Any]], index: ForgeIndex) -> Iterator[dict[str, Any]]:
    for episode in episodes:
        found = episode_verdict(index, episode) if index.pulls else ForgeVerdict(in_pr=False)
        if not found.in_pr:
            yield episode
            continue
        block = found.as_json()
        before = _applied(episode, found)
        if before is not None:
            block["tier_before"] = before
        full = episode.get("level") == "full"
        proposals_before = {}
        for p in episode.get("proposals") or ():
            if not isinstance(p, dict):
                continue
            own = verdict(index, episode_lines({"proposals": [p]}), full=full)
            if own.in_pr and (was := _applied(p, own)) is not None:
                proposals_before[str(p.get("id"))] = was
        if proposals_before:
            block["proposal_tiers_before"] = proposals_before
        episode["forge"] = block
        yield episode
