"""The datasheet written beside the data: what went in, what was left out and why.

Counts per format and split, per tier, per agent, per model and per language, the rules
versions that decided the outcomes and tiers, and the options the export ran with. Pure: the
writer feeds it episodes and rows as they go.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from capture.export.examples import Example, tier_of

__all__ = ["Datasheet", "render_markdown"]

_NONE = "(none)"


@dataclass(slots=True)
class Datasheet:
    options: dict[str, Any]
    episodes: int = 0
    episodes_by_tier: Counter[str] = field(default_factory=Counter)
    withheld: Counter[str] = field(default_factory=Counter)  # reason -> episodes
    rows: Counter[str] = field(default_factory=Counter)  # "format/split" -> rows
    examples_by_tier: Counter[str] = field(default_factory=Counter)
    by_agent: Counter[str] = field(default_factory=Counter)
    by_model: Counter[str] = field(default_factory=Counter)
    by_language: Counter[str] = field(default_factory=Counter)
    outcome_rules: Counter[str] = field(default_factory=Counter)
    tier_rules: Counter[str] = field(default_factory=Counter)
    duplicates_dropped: int = 0

    def add_episode(self, episode: dict[str, Any]) -> None:
        self.episodes += 1
        self.episodes_by_tier[tier_of(episode) or _NONE] += 1
        tier = episode.get("tier")
        if isinstance(tier, dict) and tier.get("rules_version") is not None:
            self.tier_rules[str(tier["rules_version"])] += 1
        for p in episode.get("proposals") or ():
            if p.get("rules_version") is not None:
                self.outcome_rules[str(p["rules_version"])] += 1
            ptier = p.get("tier")
            if isinstance(ptier, dict) and ptier.get("rules_version") is not None:
                self.tier_rules[str(ptier["rules_version"])] += 1

    def add_example(self, example: Example) -> None:
        """An example that made at least one row."""
        self.examples_by_tier[example.tier or _NONE] += 1
        self.by_agent[example.agent or _NONE] += 1
        self.by_model[example.model or _NONE] += 1
        self.by_language[example.language or _NONE] += 1

    def as_json(self) -> dict[str, Any]:
        def table(c: Counter[str]) -> dict[str, int]:
            return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

        return {
            "schema": "agent-capture/datasheet@1",
            "options": self.options,
            "episodes": self.episodes,
            "episodes_by_tier": table(self.episodes_by_tier),
            "withheld_episodes": table(self.withheld),
            "rows": dict(sorted(self.rows.items())),
            "examples_by_tier": table(self.examples_by_tier),
            "examples_by_agent": table(self.by_agent),
            "examples_by_model": table(self.by_model),
            "examples_by_language": table(self.by_language),
            "outcome_rules_versions": table(self.outcome_rules),
            "tier_rules_versions": table(self.tier_rules),
            "duplicates_dropped": self.duplicates_dropped,
        }


def render_markdown(sheet: dict[str, Any]) -> str:
    """The datasheet as a short Markdown card (datasheet.md beside datasheet.json)."""
    lines = ["# agent-capture export: datasheet", ""]
    options = sheet["options"]
    lines += [f"- {k}: {v}" for k, v in options.items()]
    lines += ["", f"Episodes exported: {sheet['episodes']}", ""]
    sections = (
        ("Rows per file", "rows"),
        ("Episodes per tier", "episodes_by_tier"),
        ("Episodes withheld", "withheld_episodes"),
        ("Examples per tier", "examples_by_tier"),
        ("Examples per agent", "examples_by_agent"),
        ("Examples per model", "examples_by_model"),
        ("Examples per language", "examples_by_language"),
        ("Outcome rules versions (proposals)", "outcome_rules_versions"),
        ("Tier rules versions (decisions)", "tier_rules_versions"),
    )
    for title, key in sections:
        lines += [f"## {title}", "", "| | count |", "|---|---:|"]
        table = sheet[key]
        lines += [f"| {k} | {v} |" for k, v in table.items()] or ["| (none) | 0 |"]
        lines.append("")
    lines.append(f"Duplicates dropped: {sheet['duplicates_dropped']}")
    return "\n".join(lines) + "\n"
