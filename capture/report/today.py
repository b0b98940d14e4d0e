"""Today's figures for status bars: `capture report --today --oneline` and the LSP server's
`capture.stats` command."""

from __future__ import annotations

from typing import Any

from capture.report.assemble import make_report
from capture.report.figures import Report
from capture.report.json_out import group_json
from capture.report.periods import day_start, local_offset
from capture.report.queries import Scope, workspace_id_of
from capture.report.rows import Rate
from capture.store.database import Store

__all__ = ["oneline", "today_stats"]


def _pct(rate: Rate) -> str:
    value = rate.value
    return "-" if value is None else f"{value:.0%}"


def oneline(report: Report) -> str:
    """One short line: '12 proposed · 9 applied · kept 78% (7/9) · 1 undone · tests 4/5 passed'."""
    g = report.total.current
    c = g.counts
    parts = [f"{c.n} proposed", f"{c.applied} applied"]
    kept = c.outcome_rate("kept")
    if kept.denominator:
        parts.append(f"kept {_pct(kept)} ({kept.numerator}/{kept.denominator})")
    if c.undone:
        parts.append(f"{c.undone} undone")
    if c.pending:
        parts.append(f"{c.pending} pending")
    if g.tests is not None and g.tests.runs:
        parts.append(f"tests {g.tests.passed}/{g.tests.with_result} passed")
    return " · ".join(parts)


def today_stats(
    store: Store, now: float, *, workspace: str | None = None, utc_offset: int | None = None
) -> dict[str, Any]:
    """The figures from local midnight until `now` (all workspaces, or the one at root
    `workspace`): the total of the report JSON plus `since`, `until` and `line`."""
    offset = local_offset(now) if utc_offset is None else utc_offset
    workspace_id = None
    if workspace is not None:
        workspace_id = workspace_id_of(store.conn, workspace)
        if workspace_id is None:
            workspace_id = -1  # nothing recorded there yet: every figure is zero
    scope = Scope(day_start(now, offset), now, workspace_id, offset)
    report = make_report(store.conn, scope, None, workspace=workspace)
    from capture.store.episodes import iso

    stats = group_json(report.total.current)
    del stats["key"]
    return {"since": iso(scope.since), "until": iso(now), **stats, "line": oneline(report)}
