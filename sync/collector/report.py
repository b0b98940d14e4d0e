"""The team report: per-episode figures summed per group, with small groups hidden.

The storage hands over rows already summed per (agent, model, week, contributor); everything
from there is here, as plain functions. A group (the whole team, one agent, one model, one week)
whose episodes come from fewer than `min_contributors` distinct contributors shows no figure at
all — not even how many contributors it has — so that nobody's own work can be read off the
team's page. Episodes uploaded without a contributor id count towards the sums but not towards
the contributors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sync.collector.ingest import METRIC_FIELDS, week_of

__all__ = ["ReportRow", "aggregate", "ratio", "week_range"]


@dataclass(frozen=True, slots=True)
class ReportRow:
    agent: str
    model: str
    week: str | None
    contributor: str | None
    episodes: int
    sums: tuple[float, ...]  # in METRIC_FIELDS order


@dataclass(slots=True)
class _Group:
    contributors: set[str] = field(default_factory=set)
    episodes: int = 0
    sums: list[float] = field(default_factory=lambda: [0.0] * len(METRIC_FIELDS))

    def add(self, row: ReportRow) -> None:
        if row.contributor is not None:
            self.contributors.add(row.contributor)
        self.episodes += row.episodes
        sums = self.sums
        for i, value in enumerate(row.sums):
            sums[i] += value


def week_range(since: float | None, until: float | None) -> tuple[str | None, str | None]:
    """The report counts whole weeks: `since` and `until` round down to their week's Monday
    (UTC); the weeks counted start at or after the first and before the second."""
    return (
        week_of(since) if since is not None else None,
        week_of(until) if until is not None else None,
    )


def ratio(numerator: float, denominator: float) -> dict[str, Any]:
    """A rate with what it is made of; `value` is null when nothing was measured."""
    value = round(numerator / denominator, 4) if denominator else None
    num: float = int(numerator) if float(numerator).is_integer() else round(numerator, 2)
    return {"value": value, "numerator": num, "denominator": int(denominator)}


def _figures(key: str | None, group: _Group, min_contributors: int) -> dict[str, Any]:
    if len(group.contributors) < min_contributors:
        return {
            "key": key,
            "suppressed": True,
            "reason": f"fewer than {min_contributors} contributors",
        }
    m = {name: group.sums[i] for i, name in enumerate(METRIC_FIELDS)}
    n = {name: int(v) for name, v in m.items()}
    settled = n["kept"] + n["edited"] + n["undone"] + n["lost"]
    return {
        "key": key,
        "suppressed": False,
        "contributors": len(group.contributors),
        "episodes": group.episodes,
        "proposals": {
            "total": n["proposals"],
            "shown": n["shown"],
            "applied": n["applied"],
            "rejected": n["rejected"],
        },
        "outcomes": {name: n[name] for name in ("kept", "edited", "undone", "lost", "pending")},
        "rates": {
            "applied": ratio(n["applied"], n["proposals"]),
            "rejected": ratio(n["rejected"], n["proposals"]),
            "kept": ratio(n["kept"], settled),
            "edited": ratio(n["edited"], settled),
            "undone": ratio(n["undone"], settled),
            "lost": ratio(n["lost"], settled),
            "retention": ratio(n["retained_millichars"] / 1000, n["measured_chars"]),
            "test_pass": ratio(n["test_runs_passed"], n["test_runs"]),
        },
        "chars_added": n["chars_added"],
        "lines_added": n["lines_added"],
        "test_runs": {"total": n["test_runs"], "passed": n["test_runs_passed"]},
    }


def aggregate(
    rows: Iterable[ReportRow],
    *,
    team: str,
    min_contributors: int,
    generated_at: str,
    since: str | None = None,
    until: str | None = None,
) -> dict[str, Any]:
    total = _Group()
    by: dict[str, dict[str | None, _Group]] = {"agent": {}, "model": {}, "week": {}}
    for row in rows:
        total.add(row)
        for name, key in (("agent", row.agent), ("model", row.model), ("week", row.week)):
            groups = by[name]
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group()
            group.add(row)

    def listing(name: str) -> list[dict[str, Any]]:
        groups = by[name]
        # Alphabetical (weeks: chronological), never by size: the order must not leak figures.
        ordered = sorted(groups, key=lambda k: (k is None, k or ""))
        return [_figures(k, groups[k], min_contributors) for k in ordered]

    return {
        "team": team,
        "generated_at": generated_at,
        "since": since,
        "until": until,
        "min_contributors": min_contributors,
        "total": _figures(None, total, min_contributors),
        "by_agent": listing("agent"),
        "by_model": listing("model"),
        "by_week": listing("week"),
    }
