"""The report as JSON: schema `agent-capture/report@1` (docs/report.md; fields are only
ever added within a version)."""

from __future__ import annotations

from typing import Any

from capture.report.figures import Change, Group, GroupPair, Report
from capture.report.rows import Rate
from capture.store.episodes import iso

__all__ = ["REPORT_SCHEMA", "report_json"]

REPORT_SCHEMA = "agent-capture/report@1"


def _rate(rate: Rate) -> dict[str, Any]:
    return {"numerator": rate.numerator, "denominator": rate.denominator, "rate": rate.value}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _change(change: Change) -> dict[str, Any]:
    return {
        "value": _round(change.value),
        "previous": _round(change.previous),
        "delta": _round(change.delta),
    }


def group_json(group: Group) -> dict[str, Any]:
    c = group.counts
    tests = group.tests
    return {
        "key": group.key,
        "proposals": {
            "proposed": c.n,
            "applied": c.applied,
            "rejected": c.rejected,
            "undecided": c.shown,
        },
        "acceptance": _rate(c.acceptance),
        "outcomes": {
            "settled": c.settled,
            "pending": c.pending,
            "kept": _rate(c.outcome_rate("kept")),
            "edited": _rate(c.outcome_rate("edited")),
            "undone": _rate(c.outcome_rate("undone")),
            "lost": _rate(c.outcome_rate("lost")),
            # the same over the settled proposals that could be observed (lost ones left out)
            "of_observed": {
                "kept": _rate(c.observed_rate("kept")),
                "edited": _rate(c.observed_rate("edited")),
                "undone": _rate(c.observed_rate("undone")),
            },
        },
        "added": {"chars": c.chars_added, "lines": c.lines_added},
        "retention": [
            {
                "window": w.window,
                "seconds": w.seconds,
                "observed": w.observed,
                "lost": w.lost,
                **_rate(w.rate),
            }
            for w in group.retention
        ],
        "tests": None
        if tests is None
        else {
            "runs": tests.runs,
            "with_result": tests.with_result,
            "pass_rate": _rate(tests.pass_rate),
            "episodes_tested": tests.episodes,
            "repairs": _rate(tests.repairs),
            "first_test": {
                "episodes": tests.timed,
                "median_s": _round(tests.first_test_median),
                "p90_s": _round(tests.first_test_p90),
            },
        },
        "most_undone_files": [
            {"workspace": f.workspace, "file": f.path, **_rate(f.rate)} for f in group.undone_files
        ],
        "lost_by_reason": dict(group.lost_reasons),
    }


def _pair_json(pair: GroupPair) -> dict[str, Any]:
    out = group_json(pair.current)
    out["change"] = {c.figure.id: _change(c) for c in pair.changes}
    return out


def report_json(report: Report) -> dict[str, Any]:
    total = _pair_json(report.total)
    del total["key"]
    return {
        "schema": REPORT_SCHEMA,
        "period": {"since": iso(report.since), "until": iso(report.until)},
        "previous_period": {"since": iso(report.previous_since), "until": iso(report.since)},
        "workspace": report.workspace,
        "by": report.by,
        "windows": [{"window": w, "seconds": s} for w, s in report.windows],
        "total": total,
        "groups": [_pair_json(p) for p in report.groups],
    }
