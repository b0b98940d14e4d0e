"""The tier mix: how the proposals of a period were tiered, per agent and model, and their
debt rate (the share of the edits that passed the short-term checks and then became debt).

`fetch_tier_counts` reads each proposal's current tier (`tier_history`); `tier_mix` folds the
counts (pure); `tier_mix_json` and `render_tier_mix` show them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from capture.connection import sqlite3
from capture.report.queries import Scope
from capture.store.tier_rows import proposal_tier_counts
from capture.tiers.model import Tier

__all__ = [
    "TierMixRow",
    "fetch_tier_counts",
    "render_tier_mix",
    "tier_mix_html",
    "tier_mix",
    "tier_mix_json",
]

#: the tiers of an edit that passed the short-term checks (kept or edited at the last window):
#: the debt rate's denominator
PASSED = (Tier.GOLD, Tier.SILVER, Tier.EDITED, Tier.DEBT)
NO_MODEL = "(no model)"


@dataclass(slots=True)
class TierMixRow:
    agent: str
    model: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def debt_rate(self) -> float | None:
        passed = sum(self.counts.get(t.value, 0) for t in PASSED)
        return None if passed == 0 else self.counts.get(Tier.DEBT.value, 0) / passed


def fetch_tier_counts(conn: sqlite3.Connection, scope: Scope) -> list[tuple[str, str, str, int]]:
    """(agent, model, tier, proposals) over the proposals created in the scope's period."""
    return proposal_tier_counts(conn, scope.since, scope.until, scope.workspace_id)


def tier_mix(counts: Iterable[tuple[str, str, str, int]]) -> tuple[list[TierMixRow], TierMixRow]:
    """One row per (agent, model), most proposals first, and the total."""
    rows: dict[tuple[str, str], TierMixRow] = {}
    total = TierMixRow("all", "")
    for agent, model, tier, n in counts:
        key = (agent, model or NO_MODEL)
        row = rows.setdefault(key, TierMixRow(*key))
        row.counts[tier] = row.counts.get(tier, 0) + n
        total.counts[tier] = total.counts.get(tier, 0) + n
    ordered = sorted(rows.values(), key=lambda r: (-r.total, r.agent, r.model))
    return ordered, total


def _row_json(row: TierMixRow) -> dict[str, Any]:
    return {
        "agent": row.agent,
        "model": row.model,
        "proposals": row.total,
        "tiers": {t.value: row.counts.get(t.value, 0) for t in Tier},
        "debt_rate": row.debt_rate,
    }


def tier_mix_json(rows: list[TierMixRow], total: TierMixRow) -> dict[str, Any]:
    by: dict[str, Any] = defaultdict(list)
    for row in rows:
        by["by_agent_model"].append(_row_json(row))
    total_json = _row_json(total)
    del total_json["agent"], total_json["model"]
    return {"total": total_json, "by_agent_model": by["by_agent_model"]}


def render_tier_mix(rows: list[TierMixRow], total: TierMixRow, console: Any) -> None:
    """The tier mix as a table under the report (nothing when no proposal has a tier)."""
    if total.total == 0:
        return
    from rich.table import Table

    table = Table(title="Quality tiers (proposals)", title_justify="left", box=None)
    table.add_column("agent / model")
    for t in Tier:
        table.add_column(t.value, justify="right")
    table.add_column("debt rate", justify="right")
    for row in [*rows, total]:
        rate = row.debt_rate
        name = "all" if row is total else f"{row.agent} / {row.model}"
        table.add_row(
            name,
            *(str(row.counts.get(t.value, 0)) for t in Tier),
            "-" if rate is None else f"{rate:.0%}",
        )
    console.print()
    console.print(table)


def tier_mix_html(rows: list[TierMixRow], total: TierMixRow) -> str:
    """The tier mix as a section of the HTML page (empty when no proposal has a tier)."""
    if total.total == 0:
        return ""
    from html import escape

    head = "".join(f"<th>{escape(h)}</th>" for h in ["agent / model", *Tier, "debt rate"])
    body = []
    for row in [*rows, total]:
        rate = row.debt_rate
        name = "all" if row is total else f"{row.agent} / {row.model}"
        cells = [name, *(str(row.counts.get(t.value, 0)) for t in Tier)]
        cells.append("-" if rate is None else f"{rate:.0%}")
        css = " class=total" if row is total else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    return (
        "<section><h2>Quality tiers (proposals) and debt rate</h2>"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div></section>\n"
    )
