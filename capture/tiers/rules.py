"""The tier rules: one versioned table, a reason string per decision.

A proposal's tier is the first row of `PROPOSAL_RULES` whose test holds. Its `kept` rows are the
exception: a kept proposal is `gold` when every requirement of `GOLD_REQUIREMENTS` holds, else
`silver` with the reason of each requirement it missed. An episode's tier follows from its
proposals' (`decide_episode`). docs/tiers.md states the same table for
users; change them together, and raise TIER_RULES_VERSION when a rule changes.

The facts are plain values the shell gathers: the proposal's state and final outcome (the
outcome rules), its late signals (`capture.tiers.late_signals`), the episode's linked test runs
(`capture.testruns.linking`) and the privacy layer's flag.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from capture.tiers.late_signals import LateSignals
from capture.tiers.model import Tier, TierDecision

__all__ = [
    "CHURN_DEBT",
    "COMMITTED_SHARE",
    "GOLD_REQUIREMENTS",
    "KNOWN_REASONS",
    "PROPOSAL_RULES",
    "TIER_RULES_VERSION",
    "EpisodeFacts",
    "ProposalFacts",
    "Rule",
    "decide_episode",
    "decide_proposal",
    "formatter_only",
    "generated_path",
]

TIER_RULES_VERSION = 2

#: churn within 14 days at or above this share of the committed lines makes a kept edit debt
CHURN_DEBT = 0.5
#: a kept edit counts as committed when the commit holds at least this share of its lines
COMMITTED_SHARE = 0.8
#: days after the commit the churn, revert and fix checks must have watched for gold
GOLD_DAYS = 14

_GENERATED = re.compile(
    r"(^|/)("
    r"package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|uv\.lock"
    r"|Pipfile\.lock|Cargo\.lock|Gemfile\.lock|composer\.lock|go\.sum|flake\.lock"
    r"|(vendor|node_modules|third_party|dist|build|\.venv|__generated__|generated)/.*"
    r"|.*\.(min\.js|min\.css|map|pb\.go|g\.dart)|.*_pb2(_grpc)?\.pyi?|.*\.generated\.[^/]+"
    r")$"
)


def generated_path(path: str) -> bool:
    """A lock file, a vendored or build folder, or a file a generator writes."""
    return bool(_GENERATED.search(path.replace("\\", "/")))


def formatter_only(hunks: Sequence[tuple[str, str]]) -> bool:
    """Every hunk changes whitespace only (indentation, wrapping, trailing spaces)."""
    changed = [(old, new) for old, new in hunks if old != new]
    return bool(changed) and all("".join(o.split()) == "".join(n.split()) for o, n in changed)


@dataclass(frozen=True, slots=True)
class ProposalFacts:
    """What the rules read about one proposal."""

    state: str  # shown | applied | rejected | failed
    outcome: str  # kept | edited | undone | rejected | failed | lost | pending
    path: str
    hunks: tuple[tuple[str, str], ...] = ()  # (old text, new text)
    outcome_reason: str | None = None
    late: LateSignals | None = None
    # the episode's linked runs: one that passed after the edit, and whether the agent edited
    # test files itself (its runs are then weak evidence)
    tests_passed: bool = False
    tests_edited_by_agent: bool = False
    quarantined: bool = False
    now: float = 0.0


@dataclass(frozen=True, slots=True)
class Rule:
    tier: Tier
    reason: str
    holds: Callable[[ProposalFacts], bool]


def _kept_or_edited(f: ProposalFacts) -> bool:
    return f.outcome in ("kept", "edited")


def _late(f: ProposalFacts) -> LateSignals:
    return f.late if f.late is not None else LateSignals(measured_at=0.0, lines=0)


def _reverted(f: ProposalFacts) -> bool:
    return _kept_or_edited(f) and _late(f).reverted_by is not None


def _fixed(f: ProposalFacts) -> bool:
    return _kept_or_edited(f) and _late(f).fixed_by is not None


def _churned(f: ProposalFacts) -> bool:
    churn = _late(f).churn_14d
    return _kept_or_edited(f) and churn is not None and churn >= CHURN_DEBT


def _broke_syntax(f: ProposalFacts) -> bool:
    added = _late(f).syntax_errors_added
    return _kept_or_edited(f) and _late(f).commit is not None and bool(added)


#: The table, first match wins. A kept proposal that no row catches is gold or silver.
PROPOSAL_RULES: tuple[Rule, ...] = (
    Rule(Tier.QUARANTINE, "privacy: flagged by the privacy layer", lambda f: f.quarantined),
    Rule(Tier.NOISE, "generated, vendored or lock file", lambda f: generated_path(f.path)),
    Rule(Tier.REJECTED, "rejected", lambda f: f.state == "rejected" or f.outcome == "rejected"),
    Rule(Tier.NOISE, "lost", lambda f: f.outcome == "lost"),
    Rule(Tier.NOISE, "tool call failed", lambda f: f.state == "failed" or f.outcome == "failed"),
    Rule(Tier.NOISE, "formatter-only change", lambda f: formatter_only(f.hunks)),
    Rule(Tier.UNDONE, "undone", lambda f: f.outcome == "undone"),
    Rule(
        Tier.NOISE,
        "file deleted before commit",
        lambda f: _kept_or_edited(f) and _late(f).file_gone,
    ),
    Rule(Tier.DEBT, "reverted", _reverted),
    Rule(Tier.DEBT, "fixed after", _fixed),
    Rule(Tier.DEBT, "churned within 14 days", _churned),
    Rule(Tier.DEBT, "syntax errors added at commit", _broke_syntax),
    Rule(
        Tier.EDITED,
        "edited: the user's final version is the better answer",
        lambda f: f.outcome == "edited",
    ),
)


def _committed(f: ProposalFacts) -> bool:
    late = _late(f)
    return late.commit is not None and late.committed >= COMMITTED_SHARE * max(1, late.lines)


def _watched(f: ProposalFacts) -> bool:
    days = _late(f).days_observed
    return days is not None and days >= GOLD_DAYS


#: What gold asks of a kept proposal beyond the table: the reason of each one missed is a reason
#: of its silver.
GOLD_REQUIREMENTS: tuple[tuple[str, Callable[[ProposalFacts], bool]], ...] = (
    ("not committed", _committed),
    ("14-day window still open", _watched),
    ("churned within 14 days", lambda f: not (_late(f).churn_14d or 0.0) > 0.0),
    ("no linked test run passed", lambda f: f.tests_passed),
    ("tests edited by the agent", lambda f: not f.tests_edited_by_agent),
    ("TODO/FIXME/HACK markers added", lambda f: _late(f).markers_added == 0),
)

GOLD_REASON = (
    "kept and committed, no churn, revert or fix within 14 days, linked tests passed, "
    "tests not edited by the agent"
)


def decide_proposal(f: ProposalFacts) -> TierDecision | None:
    """The proposal's tier, or None while its outcome is pending (nothing to decide yet)."""
    if f.outcome == "pending" and not f.quarantined and f.state not in ("rejected", "failed"):
        return None
    for rule in PROPOSAL_RULES:
        if rule.holds(f):
            return TierDecision(rule.tier, (rule.reason,), TIER_RULES_VERSION)
    if f.outcome != "kept":
        return TierDecision(Tier.NOISE, (f"outcome {f.outcome}",), TIER_RULES_VERSION)
    missed = tuple(reason for reason, holds in GOLD_REQUIREMENTS if not holds(f))
    if missed:
        return TierDecision(Tier.SILVER, missed, TIER_RULES_VERSION)
    return TierDecision(Tier.GOLD, (GOLD_REASON,), TIER_RULES_VERSION)


@dataclass(frozen=True, slots=True)
class EpisodeFacts:
    """What the episode rules read beyond its proposals' tiers."""

    proposals: tuple[TierDecision | None, ...] = field(default_factory=tuple)
    quarantined: bool = False
    tests_edited_by_agent: bool = False
    #: the user's next prompt read as dissatisfied (capture.followups)
    followed_by_dissatisfied: bool = False


def _tiers(decisions: Sequence[TierDecision]) -> set[Tier]:
    return {d.tier for d in decisions}


def _reasons(decisions: Sequence[TierDecision], tier: Tier) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for d in decisions:
        if d.tier == tier:
            out.update(dict.fromkeys(d.reasons))
    return tuple(out)


def decide_episode(f: EpisodeFacts) -> TierDecision | None:
    """The episode's tier from its proposals' (None while any proposal is undecided).

    quarantine if any proposal is; noise if every proposal is; otherwise, over the proposals that
    are not noise: debt if any is (its reasons), rejected if all are, undone if all are undone or
    rejected, edited if any is edited, gold if all are gold (and the agent did not edit the
    tests: an episode whose passing runs were on tests its agent edited is never gold, nor one
    the user's next prompt was dissatisfied with), else silver."""
    v = TIER_RULES_VERSION
    if f.quarantined or any(d is not None and d.tier == Tier.QUARANTINE for d in f.proposals):
        return TierDecision(Tier.QUARANTINE, ("privacy: flagged by the privacy layer",), v)
    if not f.proposals or any(d is None for d in f.proposals):
        return None
    decided = [d for d in f.proposals if d is not None]
    signal = [d for d in decided if d.tier != Tier.NOISE]
    if not signal:
        return TierDecision(Tier.NOISE, ("every proposal is noise",), v)
    tiers = _tiers(signal)
    if Tier.DEBT in tiers:
        return TierDecision(Tier.DEBT, _reasons(signal, Tier.DEBT), v)
    if tiers == {Tier.REJECTED}:
        return TierDecision(Tier.REJECTED, ("every proposal rejected",), v)
    if tiers <= {Tier.UNDONE, Tier.REJECTED}:
        return TierDecision(Tier.UNDONE, ("every proposal undone or rejected",), v)
    if Tier.EDITED in tiers:
        return TierDecision(Tier.EDITED, ("a proposal edited by the user",), v)
    if tiers & {Tier.UNDONE, Tier.REJECTED}:
        return TierDecision(Tier.SILVER, ("some proposals undone or rejected",), v)
    if f.tests_edited_by_agent:
        return TierDecision(Tier.SILVER, ("tests edited by the agent",), v)
    if f.followed_by_dissatisfied and tiers == {Tier.GOLD}:
        return TierDecision(Tier.SILVER, (FOLLOWED_BY_DISSATISFIED,), v)
    if tiers == {Tier.GOLD}:
        return TierDecision(Tier.GOLD, (GOLD_REASON,), v)
    return TierDecision(Tier.SILVER, _reasons(signal, Tier.SILVER), v)


FOLLOWED_BY_DISSATISFIED = "followed by a dissatisfied prompt"
#: The reasons `decide_episode` writes beside its proposals' own.
EPISODE_REASONS = (
    "every proposal is noise",
    "every proposal rejected",
    "every proposal undone or rejected",
    "a proposal edited by the user",
    "some proposals undone or rejected",
    "tests edited by the agent",
    FOLLOWED_BY_DISSATISFIED,
)
#: Every reason string the table writes: what an upload may carry as it is (the anonymizer
#: treats any other reason as text). A rule added above must add its reason here too.
KNOWN_REASONS = frozenset(
    {
        *(rule.reason for rule in PROPOSAL_RULES),
        *(reason for reason, _ in GOLD_REQUIREMENTS),
        GOLD_REASON,
        *EPISODE_REASONS,
        *(f"outcome {o}" for o in ("kept", "edited", "undone", "rejected", "lost", "pending")),
    }
)
