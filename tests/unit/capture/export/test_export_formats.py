"""Each format's rows from examples: which tiers make which rows, with which texts."""

from __future__ import annotations

from typing import Any

import pytest

from capture.export import openai, trl
from capture.export.examples import Example
from capture.export.formats import FORMATS, parse_formats, parse_tiers


def example(tier: str | None, final: str | None = None, sibling: str | None = None) -> Example:
    return Example(
        id="p:0", episode_id="e", proposal_id="p", tier=tier, agent="a", model="m",
        language="Python", file="a.py", prompt="PROMPT", agent_text="AGENT\n",
        final_text=final, sibling_text=sibling,
    )  # fmt: skip


def texts(rows: list[dict[str, Any]], key: str) -> list[str]:
    return [r[key][-1]["content"] if isinstance(r[key], list) else r[key] for r in rows]


@pytest.mark.parametrize(
    ("tier", "final", "answer"),
    [
        ("gold", None, "AGENT\n"),
        ("silver", "USER\n", "AGENT\n"),
        ("edited", "USER\n", "USER\n"),
        ("edited", None, None),
        ("undone", None, None),
        ("rejected", "USER\n", None),
        ("debt", None, None),
        ("noise", None, None),
        (None, None, None),
    ],
)
def test_sft_imitates_kept_agent_text_or_the_users_edit(
    tier: str | None, final: str | None, answer: str | None
) -> None:
    ex = example(tier, final)
    messages = list(trl.sft_message_rows(ex))
    completion = list(trl.sft_completion_rows(ex))
    chat = list(openai.chat_rows(ex))
    if answer is None:
        assert messages == completion == chat == []
        return
    assert messages == [
        {
            "id": "p:0",
            "tier": tier,
            "messages": [
                {"role": "user", "content": "PROMPT"},
                {"role": "assistant", "content": answer},
            ],
        }
    ]
    assert completion == [
        {"id": "p:0", "tier": tier, "prompt": "PROMPT\n\nReplacement:\n", "completion": answer}
    ]
    assert texts(chat, "messages") == [answer]
    assert chat[0]["messages"][0]["role"] == "system"


@pytest.mark.parametrize("tier", ["edited", "rejected", "undone", "debt"])
def test_preference_pairs_reject_the_agents_text_of_a_negative_tier(tier: str) -> None:
    (row,) = trl.dpo_rows(example(tier, sibling="SIBLING\n"))
    assert row["chosen"] == [{"role": "assistant", "content": "SIBLING\n"}]
    assert row["rejected"] == [{"role": "assistant", "content": "AGENT\n"}]
    assert row["prompt"] == [{"role": "user", "content": "PROMPT"}]
    (pref,) = openai.preference_rows(example(tier, final="USER\n", sibling="SIBLING\n"))
    assert set(pref) == {"input", "preferred_output", "non_preferred_output"}
    assert pref["preferred_output"][0]["content"] == "USER\n"
    assert pref["non_preferred_output"][0]["content"] == "AGENT\n"


def test_no_pair_without_a_better_answer_or_for_a_positive_tier() -> None:
    assert list(trl.dpo_rows(example("undone"))) == []
    assert list(trl.dpo_rows(example("gold", final="USER\n"))) == []
    assert list(openai.preference_rows(example("noise", sibling="S"))) == []


def test_kto_labels_positive_and_negative_tiers() -> None:
    labels = {
        tier: [r["label"] for r in trl.kto_rows(example(tier))]
        for tier in ("gold", "silver", "edited", "rejected", "undone", "debt", "noise", None)
    }
    assert labels == {
        "gold": [True],
        "silver": [True],
        "edited": [False],
        "rejected": [False],
        "undone": [False],
        "debt": [False],
        "noise": [],
        None: [],
    }


def test_format_and_tier_names_are_checked() -> None:
    assert [f.name for f in parse_formats("dpo, sft,dpo")] == ["dpo", "sft"]
    with pytest.raises(ValueError, match="unknown format 'jsonl'"):
        parse_formats("sft,jsonl")
    with pytest.raises(ValueError, match="at least one"):
        parse_formats(" , ")
    assert parse_tiers("Gold,silver") == {"gold", "silver"}
    with pytest.raises(ValueError, match="unknown tier 'bronze'"):
        parse_tiers("gold,bronze")
    assert {f.name for f in FORMATS.values() if not f.needs_text} == {"episodes", "agent-trace"}
