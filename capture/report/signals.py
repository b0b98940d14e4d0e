"""What the agents' own signals add to the report: explicit decisions (who approved or rejected
an edit, from the agents' telemetry) and how the user's next prompt read, per agent and model."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from capture.connection import sqlite3
from capture.store.decision_rows import DecisionFigures, decision_figures
from capture.store.followup_rows import FollowUpShare, followup_shares

__all__ = ["Signals", "fetch_signals", "render_signals", "signals_json"]


class Signals:
    def __init__(self, decisions: DecisionFigures, followups: list[FollowUpShare]) -> None:
        self.decisions = decisions
        self.followups = followups


def fetch_signals(conn: sqlite3.Connection, since: float, until: float) -> Signals:
    return Signals(decision_figures(conn, since, until), followup_shares(conn, since, until))


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def signals_json(signals: Signals) -> dict[str, Any]:
    d = signals.decisions
    return {
        "decisions": {
            "applied": d.applied,
            "applied_explicitly_approved": d.applied_explicit,
            "share_explicitly_approved": _share(d.applied_explicit, d.applied),
            "by_source": [
                {"decision": dec, "source": src or None, "explicit": explicit, "count": n}
                for dec, src, explicit, n in d.by_source
            ],
        },
        "follow_ups": [
            {
                "agent": f.agent,
                "model": f.model,
                "episodes_followed": f.followed,
                "corrections": f.corrections,
                "dissatisfied": f.dissatisfied,
                "share_correction": _share(f.corrections, f.followed),
                "share_dissatisfied": _share(f.dissatisfied, f.followed),
            }
            for f in signals.followups
        ],
    }


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def render_signals(signals: Signals, console: Console) -> None:
    d = signals.decisions
    if d.by_source:
        console.print()
        console.print(
            f"Decisions: {d.applied_explicit} of {d.applied} applied edits approved explicitly "
            f"by a person ({_pct(d.applied_explicit, d.applied)})",
            highlight=False,
        )
        table = Table(box=None, pad_edge=False)
        for column in ("decision", "source", "who", "count"):
            table.add_column(column, justify="right" if column == "count" else "left")
        for dec, src, explicit, n in d.by_source:
            table.add_row(dec, src or "-", "a person" if explicit else "not a person", str(n))
        console.print(table)
    if signals.followups:
        console.print()
        console.print("Follow-up prompts (the user's next prompt after an episode)")
        table = Table(box=None, pad_edge=False)
        for column in ("agent", "model", "followed", "correction", "dissatisfied"):
            table.add_column(column, justify="left" if column in ("agent", "model") else "right")
        for f in signals.followups:
            table.add_row(
                f.agent,
                f.model or "-",
                str(f.followed),
                _pct(f.corrections, f.followed),
                _pct(f.dissatisfied, f.followed),
            )
        console.print(table)
