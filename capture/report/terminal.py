"""The report in a terminal: rich tables, or one short table per group on narrow terminals.

NO_COLOR (any non-empty value) turns every style off, bold included."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from typing import IO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from capture.report.figures import Change, Group, GroupPair, Report
from capture.report.formats import (
    change_text,
    format_count,
    format_rate,
    format_seconds,
    value_text,
)

__all__ = ["WIDE", "format_change", "make_console", "render"]

#: Below this many columns each group gets a narrow table of its own.
WIDE = 110

_STYLE = {"good": "green", "bad": "red", "neutral": "", "none": "dim"}


def make_console(file: IO[str] | None = None) -> Console:
    no_color = bool(os.environ.get("NO_COLOR"))
    if no_color:
        return Console(file=file, color_system=None, highlight=False, emoji=False)
    return Console(file=file, highlight=False, emoji=False)


def format_change(change: Change) -> Text:
    text, tone = change_text(change)
    return Text(text, style=_STYLE[tone])


def _value(change: Change) -> str:
    return value_text(change.figure.kind, change.value)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M")


def _title(report: Report) -> str:
    where = report.workspace or "all workspaces"
    days = (report.until - report.since) / 86400
    length = f"{days:g} day{'s' if days != 1 else ''}" if days >= 1 else f"{days * 24:.1g}h"
    return (
        f"capture report · {where} · {_when(report.since)} → {_when(report.until)} ({length}), "
        "compared with the same length before"
    )


def _rows(report: Report) -> list[tuple[str, Group, bool]]:
    rows = [(p.current.key or "(none)", p.current, False) for p in report.groups]
    rows.append(("total", report.total.current, True))
    return rows


def _table(title: str, first: str, columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(first, overflow="fold")
    for c in columns:
        table.add_column(c, justify="right", no_wrap=True)
    return table


def _wide(report: Report, console: Console) -> None:
    by = report.by or ""
    rows = _rows(report)
    t = _table(
        "Proposals and what became of the applied ones (rate: n/settled)",
        by,
        [
            "proposed",
            "applied",
            "rejected",
            "accepted",
            "kept",
            "edited",
            "undone",
            "lost",
            "pending",
        ],
    )
    for name, g, bold in rows:
        c = g.counts
        t.add_row(
            name,
            format_count(c.n),
            format_count(c.applied),
            format_count(c.rejected),
            format_rate(c.acceptance),
            format_rate(c.outcome_rate("kept")),
            format_rate(c.outcome_rate("edited")),
            format_rate(c.outcome_rate("undone")),
            format_rate(c.outcome_rate("lost")),
            format_count(c.pending),
            style="bold" if bold else None,
        )
    console.print(t)
    windows = [w for w, _ in report.windows]
    t = _table(
        "Characters added by agents, and the share still there at each check (survived/measured)",
        by,
        ["chars", "lines", *windows],
    )
    for name, g, bold in rows:
        t.add_row(
            name,
            format_count(g.counts.chars_added),
            format_count(g.counts.lines_added),
            *(format_rate(w.rate) for w in g.retention),
            style="bold" if bold else None,
        )
    console.print(t)
    if report.total.current.tests is not None:
        t = _table(
            "Test runs after agent edits",
            by,
            ["runs", "passed", "repairs (fail→pass)", "first test: median", "p90"],
        )
        for name, g, bold in rows:
            if g.tests is None:
                continue
            t.add_row(
                name,
                format_count(g.tests.runs),
                format_rate(g.tests.pass_rate),
                format_rate(g.tests.repairs),
                format_seconds(g.tests.first_test_median),
                format_seconds(g.tests.first_test_p90),
                style="bold" if bold else None,
            )
        console.print(t)
    _undone(report.total.current, console)
    _lost(report.total.current, console)
    _changes(report.total, console, "Change against the previous period (total)")


def _undone(group: Group, console: Console) -> None:
    if not group.undone_files:
        return
    t = _table("Most-undone files", "file", ["undone/settled"])
    several = len({f.workspace for f in group.undone_files}) > 1
    for f in group.undone_files:
        name = f"{f.workspace}/{f.path}" if several else f.path
        t.add_row(name, format_rate(f.rate))
    console.print(t)


def _lost(group: Group, console: Console) -> None:
    if not group.lost_reasons:
        return
    t = _table("Lost, by reason", "reason", ["proposals"])
    for reason, count in group.lost_reasons:
        t.add_row(reason, format_count(count))
    console.print(t)


def _changes(pair: GroupPair, console: Console, title: str) -> None:
    t = _table(title, "figure", ["now", "before", "change"])
    for change in pair.changes:
        t.add_row(
            change.figure.label,
            _value(change),
            value_text(change.figure.kind, change.previous),
            format_change(change),
        )
    console.print(t)


def _group_table(name: str, pair: GroupPair) -> Table:
    g = pair.current
    t = Table(
        title=name, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_header=False
    )
    t.add_column("figure", overflow="fold")
    t.add_column("value", justify="right", overflow="fold")
    t.add_column("change", justify="right", no_wrap=True)
    changes = {c.figure.id: c for c in pair.changes}
    c = g.counts
    rows: list[tuple[str, str, str | None]] = [
        ("proposed", format_count(c.n), "proposed"),
        ("applied", format_count(c.applied), "applied"),
        ("rejected", format_count(c.rejected), "rejected"),
        ("accepted", format_rate(c.acceptance), "acceptance"),
        ("kept", format_rate(c.outcome_rate("kept")), "kept_rate"),
        ("edited", format_rate(c.outcome_rate("edited")), "edited_rate"),
        ("undone", format_rate(c.outcome_rate("undone")), "undone_rate"),
        ("lost", format_rate(c.outcome_rate("lost")), "lost_rate"),
        ("kept of observed", format_rate(c.observed_rate("kept")), "kept_rate_observed"),
        ("undone of observed", format_rate(c.observed_rate("undone")), "undone_rate_observed"),
        ("pending", format_count(c.pending), None),
        ("chars added", format_count(c.chars_added), "chars_added"),
    ]
    rows += [
        (f"retained at {w.window}", format_rate(w.rate), f"retention_{w.window}")
        for w in g.retention
    ]
    if g.tests is not None:
        rows += [
            ("test runs", format_count(g.tests.runs), "test_runs"),
            ("tests passed", format_rate(g.tests.pass_rate), "test_pass_rate"),
            ("repairs", format_rate(g.tests.repairs), "repair_rate"),
            ("first test", format_seconds(g.tests.first_test_median), "first_test_median_s"),
        ]
    for label, value, figure in rows:
        change = changes.get(figure) if figure else None
        t.add_row(label, value, format_change(change) if change else Text(""))
    return t


def _narrow(report: Report, console: Console) -> None:
    for pair in report.groups:
        console.print(_group_table(f"{report.by}: {pair.current.key or '(none)'}", pair))
    console.print(_group_table("total", report.total))
    _undone(report.total.current, console)
    _lost(report.total.current, console)


def render(report: Report, console: Console) -> None:
    console.print(Text(_title(report), style="bold"), overflow="fold")
    tests = report.total.current.tests
    if report.total.current.counts.n == 0 and (tests is None or tests.runs == 0):
        # a table of dashes says nothing: the way to the first figures instead
        console.print("No proposals recorded in this period.")
        console.print(
            "Figures appear once edits are recorded: `capture install claude-code` (or cursor, "
            "codex, gemini, copilot) for an agent's edits, an editor with the extension or "
            "`capture serve` for what you do with them; `capture demo` shows a session; "
            "`capture doctor` shows what is wired up.",
            overflow="fold",
        )
        return
    if console.width >= WIDE:
        _wide(report, console)
    else:
        _narrow(report, console)
