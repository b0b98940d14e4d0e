"""The report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched
(a Content-Security-Policy forbids it), light and dark mode from prefers-color-scheme."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from html import escape

from capture import __version__
from capture.report.figures import Change, Group, Report
from capture.report.formats import (
    change_text,
    format_count,
    format_rate,
    format_seconds,
    value_text,
)
from capture.report.periods import calendar
from capture.report.rows import Counts, Rate
from capture.report.svg import line_chart, stacked_bars

__all__ = ["OUTCOME_SERIES", "render_page"]

#: Outcome mix series, bottom to top.
OUTCOME_SERIES = ("kept", "edited", "undone", "lost", "pending", "rejected")

# Nothing may be fetched: the page is complete as written.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = (
    """
:root { color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #656d76; --line: #d0d7de; --card: #f6f8fa;
  --kept: #1a7f37; --edited: #9a6700; --undone: #cf222e; --lost: #8c959f;
  --pending: #54aeff; --rejected: #8250df; --good: #1a7f37; --bad: #cf222e;
  --s0: #0969da; --s1: #bf3989; --s2: #1a7f37; --s3: #bc4c00; --s4: #8250df; --s5: #0a7a7a;
  --s6: #9a6700; --s7: #57606a; }
@media (prefers-color-scheme: dark) { :root {
  --bg: #0d1117; --fg: #e6edf3; --muted: #8d96a0; --line: #30363d; --card: #161b22;
  --kept: #3fb950; --edited: #d29922; --undone: #f85149; --lost: #6e7681;
  --pending: #58a6ff; --rejected: #a371f7; --good: #3fb950; --bad: #f85149;
  --s0: #58a6ff; --s1: #f778ba; --s2: #3fb950; --s3: #f0883e; --s4: #a371f7; --s5: #39c5cf;
  --s6: #d29922; --s7: #8b949e; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 24px; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.muted, .tick, .empty { color: var(--muted); fill: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px; }
.card .v { font-size: 22px; font-weight: 600; } .card .k { color: var(--muted); font-size: 12px; }
.good { color: var(--good); } .bad { color: var(--bad); }
svg.chart { width: 100%; height: auto; display: block; }
svg .grid { stroke: var(--line); stroke-width: 1; } svg .tick { font-size: 11px; }
svg .line { fill: none; stroke-width: 2.5; } svg .empty { font-size: 14px; }
.o-kept { fill: var(--kept); background: var(--kept); }
.o-edited { fill: var(--edited); background: var(--edited); }
.o-undone { fill: var(--undone); background: var(--undone); }
.o-lost { fill: var(--lost); background: var(--lost); }
.o-pending { fill: var(--pending); background: var(--pending); }
.o-rejected { fill: var(--rejected); background: var(--rejected); }
"""
    + "".join(
        f".s{i} {{ stroke: var(--s{i}); fill: var(--s{i}); }} "
        f"span.s{i} {{ background: var(--s{i}); }}\n"
        for i in range(8)
    )
    + """
.legend { display: flex; flex-wrap: wrap; gap: 14px; margin: 6px 0; font-size: 12px; }
.legend span.sw { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right;
  white-space: nowrap; }
th:first-child, td:first-child { text-align: left; white-space: normal; }
th { color: var(--muted); font-weight: 600; } tr.total td { font-weight: 700; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
"""
)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M")


def _delta(change: Change) -> str:
    text, tone = change_text(change)
    css = {"good": "good", "bad": "bad", "neutral": "", "none": "muted"}[tone]
    return f'<span class="{css}">{escape(text)}</span>'


def _value(change: Change) -> str:
    return value_text(change.figure.kind, change.value)


def _table(headers: Sequence[str], rows: Iterable[tuple[Sequence[str], bool]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        f"<tr{' class=total' if total else ''}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
        for cells, total in rows
    )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _rate(rate: Rate) -> str:
    return escape(format_rate(rate))


def _rows(report: Report) -> list[tuple[str, Group, bool]]:
    rows = [(p.current.key or "(none)", p.current, False) for p in report.groups]
    rows.append(("total", report.total.current, True))
    return rows


def _legend(items: Iterable[tuple[str, str]]) -> str:
    return (
        '<div class="legend">'
        + "".join(
            f'<span><span class="sw {css}"></span>{escape(name)}</span>' for name, css in items
        )
        + "</div>"
    )


def _cards(report: Report) -> str:
    wanted = [
        "proposed",
        "acceptance",
        "kept_rate",
        "undone_rate",
        "test_pass_rate",
        "repair_rate",
        "first_test_median_s",
    ]
    if report.windows:
        wanted.insert(4, f"retention_{report.windows[-1][0]}")
    changes = {c.figure.id: c for c in report.total.changes}
    cards = []
    for fid in wanted:
        change = changes.get(fid)
        if change is None:
            continue
        cards.append(
            f'<div class="card"><div class="k">{escape(change.figure.label)}</div>'
            f'<div class="v">{escape(_value(change))}</div>'
            f'<div class="k">{_delta(change)} vs before</div></div>'
        )
    return f'<div class="cards">{"".join(cards)}</div>'


def render_page(
    report: Report, timeline: Report, agents: Report, *, now: float, tiers: str = ""
) -> str:
    """The page: summary cards, the outcome mix over time (`timeline`, by day or week), the
    retention curve per agent (`agents`), then the report's tables (`tiers`: the tier mix's
    section, already HTML)."""
    where = report.workspace or "all workspaces"
    by = report.by or ""
    by_key = {p.current.key: p.current for p in timeline.groups}
    labels = calendar(report.since, report.until, report.utc_offset, timeline.by or "day")
    # Days without proposals stay on the axis as gaps.
    columns = [
        (
            key,
            {
                "kept": g.counts.kept,
                "edited": g.counts.edited,
                "undone": g.counts.undone,
                "lost": g.counts.lost,
                "pending": g.counts.pending + g.counts.shown,
                "rejected": g.counts.rejected,
            },
        )
        for key in labels
        for g in [by_key.get(key, Group(key, Counts(), (), None))]
    ]
    mix = stacked_bars(f"Outcome mix per {timeline.by}", columns, OUTCOME_SERIES)
    windows = [w for w, _ in agents.windows]
    curves = [(p.current.key, [w.rate.value for w in p.current.retention]) for p in agents.groups]
    retention = line_chart("Retention of added characters per agent", windows, curves)

    rows = _rows(report)
    outcomes = _table(
        [
            by,
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
        (
            (
                [
                    escape(name),
                    format_count(g.counts.n),
                    format_count(g.counts.applied),
                    format_count(g.counts.rejected),
                    _rate(g.counts.acceptance),
                    _rate(g.counts.outcome_rate("kept")),
                    _rate(g.counts.outcome_rate("edited")),
                    _rate(g.counts.outcome_rate("undone")),
                    _rate(g.counts.outcome_rate("lost")),
                    format_count(g.counts.pending),
                ],
                total,
            )
            for name, g, total in rows
        ),
    )
    kept = _table(
        [by, "chars", "lines", *(w for w, _ in report.windows)],
        (
            (
                [
                    escape(name),
                    format_count(g.counts.chars_added),
                    format_count(g.counts.lines_added),
                    *(_rate(w.rate) for w in g.retention),
                ],
                total,
            )
            for name, g, total in rows
        ),
    )
    tests = _table(
        [by, "runs", "passed", "repairs (fail→pass)", "first test: median", "p90"],
        (
            (
                [
                    escape(name),
                    format_count(g.tests.runs),
                    _rate(g.tests.pass_rate),
                    _rate(g.tests.repairs),
                    format_seconds(g.tests.first_test_median),
                    format_seconds(g.tests.first_test_p90),
                ],
                total,
            )
            for name, g, total in rows
            if g.tests is not None
        ),
    )
    files = report.total.current.undone_files
    undone = (
        _table(
            ["file", "workspace", "undone/settled"],
            (([escape(f.path), escape(f.workspace), _rate(f.rate)], False) for f in files),
        )
        if files
        else '<p class="muted">No undone proposal in this period.</p>'
    )
    change = _table(
        ["figure", "now", "before", "change"],
        (
            (
                [
                    escape(c.figure.label),
                    escape(_value(c)),
                    escape(_value(Change(c.figure, c.previous, None))),
                    _delta(c),
                ],
                False,
            )
            for c in report.total.changes
        ),
    )
    title = f"capture report · {where}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<title>{escape(title)}</title><style>{_CSS}</style></head>
<body>
<header><h1>{escape(title)}</h1>
<p class="muted">{escape(_when(report.since))} → {escape(_when(report.until))}, compared with
the period of the same length before ({escape(_when(report.previous_since))} →
{escape(_when(report.since))}).</p></header>
{_cards(report)}
<section><h2>Outcome mix per {escape(timeline.by or "day")}</h2>
{_legend((o, f"o-{o}") for o in OUTCOME_SERIES)}{mix}</section>
<section><h2>Retention of added characters per agent</h2>
{_legend((p.current.key, f"s{i % 8}") for i, p in enumerate(agents.groups))}{retention}</section>
<section><h2>Proposals and what became of the applied ones</h2>{outcomes}</section>
<section><h2>Characters added, and the share still there at each check</h2>{kept}</section>
<section><h2>Test runs after agent edits</h2>{tests}</section>
<section><h2>Most-undone files</h2>{undone}</section>
{tiers}<section><h2>Change against the previous period</h2>{change}</section>
<footer>agent-capture {escape(__version__)} · generated {escape(_when(now))} · this page
loads nothing from the network.</footer>
</body></html>
"""
