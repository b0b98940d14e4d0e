"""The report's tier mix folded from (agent, model, tier, count) rows."""

from __future__ import annotations

from capture.report.tier_mix import tier_mix, tier_mix_json


def test_rows_per_agent_and_model_with_their_debt_rate() -> None:
    rows, total = tier_mix(
        [
            ("claude-code", "opus", "gold", 3),
            ("claude-code", "opus", "debt", 1),
            ("claude-code", "opus", "undone", 4),
            ("codex", "", "noise", 2),
        ]
    )
    assert [(r.agent, r.model, r.total) for r in rows] == [
        ("claude-code", "opus", 8),
        ("codex", "(no model)", 2),
    ]
    # debt over the edits that passed the short-term checks (gold, silver, edited, debt)
    assert rows[0].debt_rate == 0.25
    assert rows[1].debt_rate is None
    out = tier_mix_json(rows, total)
    assert out["total"]["proposals"] == 10
    assert out["total"]["tiers"]["undone"] == 4
    assert out["by_agent_model"][0]["tiers"]["silver"] == 0
