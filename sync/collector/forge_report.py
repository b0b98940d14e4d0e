"""The team's forge figures per agent and per model, from the export's episodes with their
forge verdicts: how much of the agent's work reached a pull request and the merge, how much of
it review changed, how many rounds it took, how often it was approved in a hurry.

A group whose episodes come from fewer than `min_contributors` distinct contributors shows no
figure (as in the team report).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ForgeTally", "forge_figures", "tallied"]


@dataclass(slots=True)
class _Group:
    contributors: set[str] = field(default_factory=set)
    in_pr: int = 0
    merged: int = 0
    closed: int = 0
    changed: int = 0
    retained: float = 0.0  # sum over merged episodes of the share of lines unchanged
    measured: int = 0  # merged episodes with a changed share
    rounds: int = 0
    quick: int = 0

    def add(self, contributor: str, forge: dict[str, Any]) -> None:
        self.contributors.add(contributor)
        self.in_pr += 1
        self.rounds += int(forge.get("review_rounds") or 0)
        self.quick += bool(forge.get("quick_approval"))
        self.closed += bool(forge.get("closed_unmerged"))
        if forge.get("merged"):
            self.merged += 1
            share = forge.get("changed_in_review")
            if isinstance(share, int | float):
                self.measured += 1
                self.retained += 1.0 - share
                self.changed += share > 0

    def figures(self, key: str | None, min_contributors: int) -> dict[str, Any]:
        if len(self.contributors) < min_contributors:
            return {"key": key, "suppressed": True,
                    "reason": f"fewer than {min_contributors} contributors"}  # fmt: skip
        return {
            "key": key,
            "suppressed": False,
            "contributors": len(self.contributors),
            "in_pr": self.in_pr,
            "merged": self.merged,
            "closed_unmerged": self.closed,
            "merge_retention": round(self.retained / self.measured, 4) if self.measured else None,
            "changed_in_review_share": (
                round(self.changed / self.measured, 4) if self.measured else None
            ),
            "review_rounds_mean": round(self.rounds / self.in_pr, 4) if self.in_pr else None,
            "quick_approvals": self.quick,
        }


@dataclass(slots=True)
class ForgeTally:
    """Collects, as the export streams by, what the figures need of each episode."""

    by_agent: dict[str, _Group] = field(default_factory=lambda: defaultdict(_Group))
    by_model: dict[str, _Group] = field(default_factory=lambda: defaultdict(_Group))
    total: _Group = field(default_factory=_Group)

    def add(self, episode: dict[str, Any]) -> None:
        forge = episode.get("forge")
        if not isinstance(forge, dict):
            return
        collector = episode.get("collector") or {}
        who = str(collector.get("contributor") or "")
        self.by_agent[str(episode.get("agent") or "")].add(who, forge)
        self.by_model[str(episode.get("model") or "")].add(who, forge)
        self.total.add(who, forge)


def tallied(episodes: Iterable[dict[str, Any]], tally: ForgeTally) -> Iterator[dict[str, Any]]:
    for episode in episodes:
        tally.add(episode)
        yield episode


def forge_figures(tally: ForgeTally, team: str, min_contributors: int = 5) -> dict[str, Any]:
    def groups(by: dict[str, _Group]) -> list[dict[str, Any]]:
        return [by[k].figures(k, min_contributors) for k in sorted(by)]

    return {
        "team": team,
        "min_contributors": min_contributors,
        "total": tally.total.figures(None, min_contributors),
        "by_agent": groups(tally.by_agent),
        "by_model": groups(tally.by_model),
    }
