"""What an upload carries of tiers, late signals, checkpoints and a run's sources, at every
level: the fixed strings our own code writes go out as they are, anything else is text."""

from __future__ import annotations

import pytest

from capture.tiers.late_signals import LateSignals
from capture.tiers.model import Tier
from capture.tiers.rules import (
    KNOWN_REASONS,
    EpisodeFacts,
    ProposalFacts,
    decide_episode,
    decide_proposal,
)
from sync.anonymize import Level, WorkspacePolicy, dumps
from tests.unit.sync.test_sync_anonymize import anonymizer, episode

SHA = "3f1c9a7be20d4c6f8a1b2c3d4e5f60718293a4b5"
FIX_SHA = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807"
DEBT = {
    "tier": "debt",
    "reasons": ["reverted"],
    "rules_version": 1,
    "decided_at": "2026-11-30T09:30:00.000Z",
}
ODD = {
    "tier": "platinum",
    "reasons": ["kept, says alice@acme.io", "reverted"],
    "rules_version": "1",
    "decided_at": "yesterday",
}
LATE = {
    "measured_at": "2026-12-07T09:00:00.000Z",
    "lines": 4,
    "committed_lines": 4,
    "commit": SHA,
    "committed_at": "2026-11-30T10:00:00.000Z",
    "renamed": False,
    "churn_14d": 0.25,
    "churn_30d": None,
    "days_observed": 7.0,
    "reverted_by": None,
    "reverted_at": None,
    "revert_kind": None,
    "fixed_by": FIX_SHA,
    "fixed_at": "2026-12-02T10:00:00.000Z",
    "syntax_errors_added": 0,
    "markers_added": 1,
    "file_gone": False,
}
CHECKPOINT = {
    "window": "10m",
    "due_at": "2026-11-30T09:22:10.400Z",
    "observed_at": "2026-11-30T09:22:10.650Z",
    "similarity": 0.9,
    "retention": 0.8,
    "outcome": "kept",
    "reason": "agent text present",
    "rules_version": 2,
    "late_seconds": 0.25,
    "via": "disk",
}


def tiered() -> dict:
    e = episode()
    e["tier"] = DEBT
    e["tier_history"] = [{**DEBT, "tier": "silver", "reasons": ["not committed"]}, DEBT]
    p = e["proposals"][0]
    p["tier"] = DEBT
    p["tier_history"] = [DEBT]
    p["late_signals"] = LATE
    p["checkpoints"] = [dict(CHECKPOINT)]
    e["test_runs"][0]["seen_by"] = ["hook", "wrapper", "alice-thinkpad"]
    return e


@pytest.mark.parametrize("level", ["metrics", "redacted", "full"])
def test_tiers_go_at_every_level(level: str) -> None:
    out = anonymizer().project(tiered(), WorkspacePolicy(Level(level))).episode
    assert out is not None
    assert out["tier"] == DEBT
    assert [d["tier"] for d in out["tier_history"]] == ["silver", "debt"]
    assert out["tier_history"][0]["reasons"] == ["not committed"]
    p = out["proposals"][0]
    assert p["tier"] == DEBT and p["tier_history"] == [DEBT]


@pytest.mark.parametrize("level", ["metrics", "redacted", "full"])
def test_checkpoints_keep_every_field_the_store_writes(level: str) -> None:
    out = anonymizer().project(tiered(), WorkspacePolicy(Level(level))).episode
    assert out is not None
    (checkpoint,) = out["proposals"][0]["checkpoints"]
    assert checkpoint == CHECKPOINT and list(checkpoint) == list(CHECKPOINT)


@pytest.mark.parametrize("level", ["metrics", "redacted", "full"])
def test_a_runs_sources_are_the_names_our_code_writes(level: str) -> None:
    out = anonymizer().project(tiered(), WorkspacePolicy(Level(level))).episode
    assert out is not None
    assert out["test_runs"][0]["seen_by"] == ["hook", "wrapper"]


def test_late_signals_at_metrics_are_numbers_flags_and_times_never_a_sha() -> None:
    out = anonymizer().project(tiered(), WorkspacePolicy(Level.METRICS)).episode
    assert out is not None
    late = out["proposals"][0]["late_signals"]
    assert SHA not in dumps(out) and FIX_SHA not in dumps(out)
    assert "commit" not in late and "fixed_by" not in late and "reverted_by" not in late
    assert late["committed"] is True and late["fixed"] is True and late["reverted"] is False
    assert late["churn_14d"] == 0.25 and late["markers_added"] == 1 and late["lines"] == 4
    assert late["fixed_at"] == LATE["fixed_at"] and late["days_observed"] == 7.0


def test_late_signals_at_the_text_levels_carry_the_shas_as_text() -> None:
    out = anonymizer().project(tiered(), WorkspacePolicy(Level.FULL)).episode
    assert out is not None
    late = out["proposals"][0]["late_signals"]
    # A SHA is text at these levels: scrubbed like any (it may read as a hex secret).
    assert isinstance(late["commit"], str) and late["commit"]
    assert late["reverted_by"] is None and late["committed"] is True


@pytest.mark.parametrize("level", ["metrics", "redacted"])
def test_a_reason_or_tier_our_table_never_writes_is_text(level: str) -> None:
    e = tiered()
    e["proposals"][0]["tier"] = ODD
    out = anonymizer().project(e, WorkspacePolicy(Level(level))).episode
    assert out is not None
    tier = out["proposals"][0]["tier"]
    assert tier["tier"] is None and tier["rules_version"] is None and tier["decided_at"] is None
    assert "alice@acme.io" not in dumps(out)
    if level == "metrics":
        assert tier["reasons"] == ["reverted"]
    else:
        assert tier["reasons"][1] == "reverted" and "kept, says" in tier["reasons"][0]


def test_every_reason_the_rules_write_is_known() -> None:
    late = LateSignals(measured_at=0.0, lines=2, commit="a", committed=2, days_observed=20.0)
    reverted = LateSignals(measured_at=0.0, lines=2, commit="a", committed=2, reverted_by="b")
    seen: set[str] = set()
    decisions = []
    for state in ("applied", "rejected", "shown"):
        for outcome in ("kept", "edited", "undone", "rejected", "lost", "pending"):
            for path in ("a.py", "package-lock.json"):
                for signals in (None, late, reverted):
                    for passed in (False, True):
                        d = decide_proposal(
                            ProposalFacts(state, outcome, path, late=signals, tests_passed=passed)
                        )
                        decisions.append(d)
                        if d is not None:
                            seen.update(d.reasons)
    for edited in (False, True):
        for picks in ((0,), (0, 1), tuple(range(len(decisions)))):
            chosen = tuple(decisions[i] for i in picks if decisions[i] is not None)
            d = decide_episode(EpisodeFacts(chosen, tests_edited_by_agent=edited))
            if d is not None:
                seen.update(d.reasons)
    assert seen <= KNOWN_REASONS
    assert {"reverted", "rejected", "not committed"} <= seen
    assert Tier.DEBT.value == "debt"
