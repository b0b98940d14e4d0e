"""Every tier rule at the lowest level: plain facts in, a tier and its reasons out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from capture.tiers.late_signals import LateSignals
from capture.tiers.model import Tier, TierDecision
from capture.tiers.rules import (
    GOLD_REASON,
    TIER_RULES_VERSION,
    EpisodeFacts,
    ProposalFacts,
    decide_episode,
    decide_proposal,
    formatter_only,
    generated_path,
)

DAY = 86400.0
HUNK = (("    return 0\n", "    return sum(items)\n"),)
CLEAN = LateSignals(
    measured_at=20 * DAY,
    lines=1,
    committed=1,
    commit="c" * 40,
    committed_at=1 * DAY,
    churn_14d=0.0,
    churn_30d=0.0,
    days_observed=19.0,
    syntax_errors_added=0,
)
GOLDEN = ProposalFacts(
    state="applied",
    outcome="kept",
    path="calc.py",
    hunks=HUNK,
    late=CLEAN,
    tests_passed=True,
    tests_edited_by_agent=False,
)


def tier(facts: ProposalFacts) -> tuple[Tier, tuple[str, ...]]:
    decision = decide_proposal(facts)
    assert decision is not None
    assert decision.rules_version == TIER_RULES_VERSION
    return decision.tier, decision.reasons


def test_gold_needs_every_requirement() -> None:
    assert tier(GOLDEN) == (Tier.GOLD, (GOLD_REASON,))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"late": None}, "not committed"),
        ({"late": replace(CLEAN, commit=None, committed=0)}, "not committed"),
        ({"late": replace(CLEAN, lines=10, committed=5)}, "not committed"),
        ({"late": replace(CLEAN, days_observed=13.9)}, "14-day window still open"),
        ({"late": replace(CLEAN, churn_14d=0.25)}, "churned within 14 days"),
        ({"tests_passed": False}, "no linked test run passed"),
        ({"tests_edited_by_agent": True}, "tests edited by the agent"),
        ({"late": replace(CLEAN, markers_added=1)}, "TODO/FIXME/HACK markers added"),
    ],
)
def test_kept_short_of_gold_is_silver_with_each_missed_requirement(
    change: dict, reason: str
) -> None:
    got, reasons = tier(replace(GOLDEN, **change))
    assert got == Tier.SILVER
    assert reason in reasons


def test_silver_lists_every_requirement_it_missed() -> None:
    facts = replace(GOLDEN, late=None, tests_passed=False, tests_edited_by_agent=True)
    got, reasons = tier(facts)
    assert got == Tier.SILVER
    assert {"not committed", "no linked test run passed", "tests edited by the agent"} <= set(
        reasons
    )


def test_passing_runs_on_tests_the_agent_edited_are_never_gold() -> None:
    got, _ = tier(replace(GOLDEN, tests_edited_by_agent=True, tests_passed=True))
    assert got != Tier.GOLD


@pytest.mark.parametrize(
    ("late", "reason"),
    [
        (replace(CLEAN, reverted_by="r" * 40, reverted_at=8 * DAY), "reverted"),
        (replace(CLEAN, fixed_by="f" * 40, fixed_at=3 * DAY), "fixed after"),
        (replace(CLEAN, churn_14d=0.5), "churned within 14 days"),
        (replace(CLEAN, syntax_errors_added=2), "syntax errors added at commit"),
    ],
)
def test_kept_then_reverted_fixed_churned_or_broken_is_debt(late: LateSignals, reason: str) -> None:
    assert tier(replace(GOLDEN, late=late)) == (Tier.DEBT, (reason,))


def test_an_edited_proposal_whose_lines_were_reverted_is_debt_too() -> None:
    late = replace(CLEAN, reverted_by="r" * 40)
    assert tier(replace(GOLDEN, outcome="edited", late=late))[0] == Tier.DEBT


def test_edited_undone_rejected_lost() -> None:
    assert tier(replace(GOLDEN, outcome="edited"))[0] == Tier.EDITED
    assert tier(replace(GOLDEN, outcome="undone")) == (Tier.UNDONE, ("undone",))
    assert tier(replace(GOLDEN, state="rejected", outcome="rejected")) == (
        Tier.REJECTED,
        ("rejected",),
    )
    assert tier(replace(GOLDEN, outcome="lost")) == (Tier.NOISE, ("lost",))


def test_noise_generated_files_formatter_only_and_files_gone_before_commit() -> None:
    assert tier(replace(GOLDEN, path="web/package-lock.json")) == (
        Tier.NOISE,
        ("generated, vendored or lock file",),
    )
    spaces = (("x = f(a,b)\n", "x = f(a, b)\n"),)
    assert tier(replace(GOLDEN, hunks=spaces)) == (Tier.NOISE, ("formatter-only change",))
    gone = LateSignals(measured_at=DAY, lines=1, file_gone=True)
    assert tier(replace(GOLDEN, late=gone)) == (
        Tier.NOISE,
        ("file deleted before commit",),
    )


def test_quarantine_wins_over_everything() -> None:
    late = replace(CLEAN, reverted_by="r" * 40)
    got, _ = tier(replace(GOLDEN, quarantined=True, late=late, path="yarn.lock"))
    assert got == Tier.QUARANTINE


def test_a_pending_proposal_has_no_tier_yet() -> None:
    assert decide_proposal(replace(GOLDEN, outcome="pending")) is None


@pytest.mark.parametrize(
    ("path", "generated"),
    [
        ("poetry.lock", True),
        ("vendor/lib/a.go", True),
        ("src/node_modules/x/index.js", True),
        ("static/app.min.js", True),
        ("proto/api_pb2.py", True),
        ("src/lockfile.py", False),
        ("src/build_tools.py", False),
        ("calc.py", False),
    ],
)
def test_generated_paths(path: str, generated: bool) -> None:
    assert generated_path(path) is generated


def test_formatter_only_needs_a_change_and_whitespace_only() -> None:
    assert formatter_only((("a\n", "  a\n"),))
    assert not formatter_only((("a\n", "a\n"),))
    assert not formatter_only((("a\n", "b\n"),))


def d(t: Tier, *reasons: str) -> TierDecision:
    return TierDecision(t, reasons or (t.value,), TIER_RULES_VERSION)


def episode(*tiers: TierDecision | None, **facts: bool) -> TierDecision | None:
    return decide_episode(EpisodeFacts(proposals=tuple(tiers), **facts))


def test_episode_tiers_from_its_proposals() -> None:
    gold = d(Tier.GOLD, GOLD_REASON)
    assert episode(gold, gold).tier == Tier.GOLD  # type: ignore[union-attr]
    assert episode(gold, d(Tier.SILVER, "not committed")) == d(Tier.SILVER, "not committed")
    assert episode(gold, d(Tier.DEBT, "reverted")) == d(Tier.DEBT, "reverted")
    assert episode(gold, d(Tier.EDITED)).tier == Tier.EDITED  # type: ignore[union-attr]
    assert episode(d(Tier.REJECTED), d(Tier.REJECTED)).tier == Tier.REJECTED  # type: ignore[union-attr]
    assert episode(d(Tier.UNDONE), d(Tier.REJECTED)).tier == Tier.UNDONE  # type: ignore[union-attr]
    assert episode(gold, d(Tier.UNDONE)).tier == Tier.SILVER  # type: ignore[union-attr]
    # noise is left out, unless it is everything
    assert episode(gold, d(Tier.NOISE)).tier == Tier.GOLD  # type: ignore[union-attr]
    assert episode(d(Tier.NOISE), d(Tier.NOISE)).tier == Tier.NOISE  # type: ignore[union-attr]


def test_an_episode_is_undecided_while_a_proposal_is_and_quarantine_wins() -> None:
    assert episode(d(Tier.GOLD), None) is None
    assert episode() is None
    assert episode(d(Tier.GOLD), None, quarantined=True).tier == Tier.QUARANTINE  # type: ignore[union-attr]
    assert episode(d(Tier.GOLD), d(Tier.QUARANTINE)).tier == Tier.QUARANTINE  # type: ignore[union-attr]


def test_an_episode_whose_agent_edited_the_tests_is_never_gold() -> None:
    gold = d(Tier.GOLD, GOLD_REASON)
    got = episode(gold, tests_edited_by_agent=True)
    assert got == d(Tier.SILVER, "tests edited by the agent")
