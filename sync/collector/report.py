"""The team report: per-episode figures summed per group, with small groups hidden.

The storage hands over rows already summed per (agent, model, week, contributor); everything
from there is here, as plain functions. A group (the whole team, one agent, one model, one week)
whose episodes come from fewer than `min_contributors` distinct contributors shows no figure at
all — not even how many contributors it has — so that nobody's own work can be read off the
team's page. Episodes uploaded without a contributor id count towards the sums but not towards
the contributors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sync.collector.ingest import METRIC_FIELDS, TIERS, week_of

__all__ = [
    "week_filter",
    "PASSED_TIERS",
    "CurveRow",
    "ReportRow",
    "aggregate",
    "ratio",
    "retention_curve",
    "week_range",
    "weighted_median",
]

#: The tiers of an edit that passed the short-term checks: the debt rate's denominator (as in
#: `capture report`'s tier mix).
PASSED_TIERS = ("gold", "silver", "edited", "debt")
_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True, slots=True)
class ReportRow:
    agent: str
    model: str
    week: str | None
    contributor: str | None
    episodes: int
    sums: tuple[float, ...]  # in METRIC_FIELDS order


@dataclass(frozen=True, slots=True)
class CurveRow:
    """A cell of the figures that do not add up, summed per (agent, model, week) by the storage:
    either one value of the time to first test (whole seconds) and how many episodes had it, or
    one checkpoint window's measured checkpoints and their retentions' sum in thousandths."""

    agent: str
    model: str
    week: str | None
    first_test_s: float | None = None
    episodes: int = 0
    window: str | None = None
    checkpoints: int = 0
    retained_millis: int = 0


def weighted_median(values: list[tuple[float, int]]) -> float | None:
    """The median of values given with how often each occurs (as `statistics.median` of the
    values repeated: the mean of the two middle ones when their number is even)."""
    pairs = sorted((v, n) for v, n in values if n > 0)
    total = sum(n for _, n in pairs)
    if not total:
        return None
    lower, upper = (total - 1) // 2, total // 2
    seen = 0
    low: float | None = None
    for value, n in pairs:
        if low is None and seen + n > lower:
            low = value
        if seen + n > upper:
            return (low + value) / 2 if low is not None else value
        seen += n
    return None


@dataclass(slots=True)
class _Group:
    contributors: set[str] = field(default_factory=set)
    episodes: int = 0
    sums: list[float] = field(default_factory=lambda: [0.0] * len(METRIC_FIELDS))
    first_tests: list[tuple[float, int]] = field(default_factory=list)
    windows: dict[str, list[int]] = field(default_factory=dict)

    def add(self, row: ReportRow) -> None:
        if row.contributor is not None:
            self.contributors.add(row.contributor)
        self.episodes += row.episodes
        sums = self.sums
        for i, value in enumerate(row.sums):
            sums[i] += value

    def add_curve(self, row: CurveRow) -> None:
        if row.first_test_s is not None:
            self.first_tests.append((row.first_test_s, row.episodes))
        if row.window is not None:
            slot = self.windows.setdefault(row.window, [0, 0])
            slot[0] += row.checkpoints
            slot[1] += row.retained_millis


def _window_order(label: str) -> tuple[int, float, str]:
    # Timed windows by their duration, then the event checkpoints (save, commit, late) by name.
    match = _DURATION.match(label)
    if match:
        return (0, float(match.group(1)) * _UNITS[match.group(2) or "s"], label)
    return (1, 0.0, label)


def retention_curve(windows: dict[str, list[int]]) -> list[dict[str, Any]]:
    """Mean retention at each checkpoint window, shortest window first."""
    return [
        {
            "window": label,
            "checkpoints": windows[label][0],
            "mean_retention": (
                round(windows[label][1] / 1000 / windows[label][0], 4)
                if windows[label][0]
                else None
            ),
        }
        for label in sorted(windows, key=_window_order)
    ]


def _tier_mix(n: dict[str, int]) -> dict[str, Any]:
    counts = {t: n[f"tier_{t}"] for t in TIERS}
    passed = sum(counts[t] for t in PASSED_TIERS)
    return {
        "proposals": counts,
        "tiered": sum(counts.values()),
        "debt_rate": ratio(counts["debt"], passed),
    }


def week_range(since: float | None, until: float | None) -> tuple[str | None, str | None]:
    """The report counts whole weeks: `since` and `until` round down to their week's Monday
    (UTC); the weeks counted start at or after the first and before the second."""
    return (
        week_of(since) if since is not None else None,
        week_of(until) if until is not None else None,
    )


def week_filter(since: float | None, until: float | None, mark: str) -> tuple[str, list[str]]:
    """The SQL condition (`" AND week >= ? AND week < ?"`, with `mark` as the placeholder) and
    its parameters that keep the weeks of `week_range`."""
    first, last = week_range(since, until)
    where, params = "", []
    if first is not None:
        where += f" AND week >= {mark}"
        params.append(first)
    if last is not None:
        where += f" AND week < {mark}"
        params.append(last)
    return where, params


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
        "tiers": _tier_mix(n),
        "retention_curve": retention_curve(group.windows),
        "time_to_first_test": {
            "median_s": weighted_median(group.first_tests),
            "episodes": sum(n for _, n in group.first_tests),
        },
        "repairs": {
            "repaired": n["repaired_episodes"],
            "failing": n["failing_episodes"],
            "rate": ratio(n["repaired_episodes"], n["failing_episodes"]),
        },
    }


def aggregate(
    rows: Iterable[ReportRow],
    *,
    team: str,
    min_contributors: int,
    generated_at: str,
    since: str | None = None,
    until: str | None = None,
    curves: Iterable[CurveRow] = (),
) -> dict[str, Any]:
    """The report over the summed rows, and the `curves` (time to first test, retention per
    window) of the same episodes. A group's contributors are counted from `rows`
    alone: what it hides does not depend on the curves."""
    total = _Group()
    by: dict[str, dict[str | None, _Group]] = {"agent": {}, "model": {}, "week": {}}

    def groups_of(agent: str, model: str, week: str | None) -> Iterable[_Group]:
        yield total
        for name, key in (("agent", agent), ("model", model), ("week", week)):
            groups = by[name]
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group()
            yield group

    for row in rows:
        for group in groups_of(row.agent, row.model, row.week):
            group.add(row)
    for curve in curves:
        for group in groups_of(curve.agent, curve.model, curve.week):
            group.add_curve(curve)

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
