"""The prompt that opens an episode is the follow-up of the agent's episode before it in the
session: kept with its label and rule, and a dissatisfied one keeps that episode from gold."""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.config import load_config
from capture.recording.recorder import Recorder
from capture.store.database import Store
from capture.store.followup_rows import followup_shares, followups_of
from capture.tiers.model import Tier, TierDecision
from capture.tiers.rules import (
    FOLLOWED_BY_DISSATISFIED,
    TIER_RULES_VERSION,
    EpisodeFacts,
    decide_episode,
)


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Recorder:
    monkeypatch.setenv("CAPTURE_HOME", str(tmp_path / "home"))
    config = load_config()
    return Recorder(Store.open(config.paths.db), config)


def turn(recorder: Recorder, ws: int, turn_id: str, prompt: str, now: float) -> str:
    return recorder.turn(
        workspace_id=ws,
        agent="claude-code",
        now=now,
        session_id="s1",
        turn_id=turn_id,
        model="claude-sonnet-4-6",
        prompt=prompt,
    )


def test_the_next_prompt_is_kept_as_the_previous_episodes_follow_up(recorder: Recorder) -> None:
    ws = recorder.store.ensure_workspace("/tmp/ws", 1.0)
    first = turn(recorder, ws, "t1", "add a login page", 10.0)
    assert followups_of(recorder.store.conn, [first]) == {}
    second = turn(recorder, ws, "t2", "you have not fixed the redirect, go back", 20.0)
    third = turn(recorder, ws, "t3", "No, I meant the other form", 30.0)
    kept = followups_of(recorder.store.conn, [first, second, third])
    assert (kept[first].label, kept[first].rule, kept[first].next_episode_id) == (
        "dissatisfied",
        "en-you-failed",
        second,
    )
    assert kept[second].label == "correction" and third not in kept
    (share,) = followup_shares(recorder.store.conn)
    assert (share.agent, share.model, share.followed, share.corrections, share.dissatisfied) == (
        "claude-code",
        "claude-sonnet-4-6",
        2,
        1,
        1,
    )


def test_an_episode_followed_by_a_dissatisfied_prompt_is_not_gold() -> None:
    gold = TierDecision(Tier.GOLD, ("gold",), TIER_RULES_VERSION)
    assert decide_episode(EpisodeFacts(proposals=(gold,))).tier is Tier.GOLD  # type: ignore[union-attr]
    verdict = decide_episode(EpisodeFacts(proposals=(gold,), followed_by_dissatisfied=True))
    assert verdict is not None
    assert (verdict.tier, verdict.reasons) == (Tier.SILVER, (FOLLOWED_BY_DISSATISFIED,))
    assert verdict.rules_version == TIER_RULES_VERSION == 2
