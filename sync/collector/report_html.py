"""The team report as one self-contained HTML page (no script, no network), light and dark."""

from __future__ import annotations

from html import escape
from typing import Any

from sync.collector.ingest import TIERS

__all__ = ["render_html"]

_STYLE = """
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #6a737d;
  --line: #d0d7de; --kept: #2da44e; --edited: #bf8700; --undone: #cf222e; --lost: #8c959f; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8b949e;
  --line: #30363d; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: .3rem .5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.muted { color: var(--muted); }
.mix { display: flex; height: .8rem; width: 10rem; border-radius: 2px; overflow: hidden; }
.mix span { display: block; }
"""

_OUTCOME_COLOURS = (
    ("kept", "--kept"),
    ("edited", "--edited"),
    ("undone", "--undone"),
    ("lost", "--lost"),
)


def _rate(r: dict[str, Any]) -> str:
    if r["value"] is None:
        return '<span class="muted">n/a</span>'
    return (
        f'{r["value"] * 100:.1f}% <span class="muted">({r["numerator"]:g}/'
        f"{r['denominator']})</span>"
    )


def _mix(g: dict[str, Any]) -> str:
    total = sum(g["outcomes"][o] for o, _ in _OUTCOME_COLOURS)
    if not total:
        return ""
    parts = "".join(
        f'<span title="{o} {g["outcomes"][o]}" style="width:{g["outcomes"][o] / total * 100:.2f}%;'
        f'background:var({colour})"></span>'
        for o, colour in _OUTCOME_COLOURS
        if g["outcomes"][o]
    )
    return f'<div class="mix">{parts}</div>'


_HEAD = (
    "<tr><th>{label}</th><th>contributors</th><th>episodes</th><th>proposals</th>"
    "<th>applied</th><th>kept</th><th>edited</th><th>undone</th><th>retention</th>"
    "<th>tests passed</th><th>outcome mix</th></tr>"
)


def _row(label: str, g: dict[str, Any], min_contributors: int) -> str:
    if g["suppressed"]:
        return (
            f'<tr><td>{escape(label)}</td><td colspan="10" class="muted">not shown: '
            f"fewer than {min_contributors} contributors</td></tr>"
        )
    rates = g["rates"]
    cells = [
        str(g["contributors"]),
        str(g["episodes"]),
        str(g["proposals"]["total"]),
        _rate(rates["applied"]),
        _rate(rates["kept"]),
        _rate(rates["edited"]),
        _rate(rates["undone"]),
        _rate(rates["retention"]),
        _rate(rates["test_pass"]),
        _mix(g),
    ]
    return f"<tr><td>{escape(label)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


_TIER_HEAD = (
    "<tr><th>{label}</th>"
    + "".join(f"<th>{t}</th>" for t in TIERS)
    + "<th>debt rate</th><th>first test (median)</th><th>repairs</th>"
    "<th>retention per window</th></tr>"
)


def _seconds(value: float | None) -> str:
    if value is None:
        return '<span class="muted">n/a</span>'
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.1f} min"


def _curve(points: list[dict[str, Any]]) -> str:
    parts = [
        f"{escape(p['window'])} {p['mean_retention'] * 100:.0f}%"
        for p in points
        if p["mean_retention"] is not None
    ]
    return ", ".join(parts) if parts else '<span class="muted">n/a</span>'


def _tier_row(label: str, g: dict[str, Any], min_contributors: int) -> str:
    if g["suppressed"]:
        return (
            f'<tr><td>{escape(label)}</td><td colspan="{len(TIERS) + 4}" class="muted">not '
            f"shown: fewer than {min_contributors} contributors</td></tr>"
        )
    tiers = g["tiers"]
    first = g["time_to_first_test"]
    repairs = g["repairs"]
    cells = [
        *(str(tiers["proposals"][t]) for t in TIERS),
        _rate(tiers["debt_rate"]),
        f'{_seconds(first["median_s"])} <span class="muted">({first["episodes"]} episodes)</span>',
        _rate(repairs["rate"]),
        _curve(g["retention_curve"]),
    ]
    return f"<tr><td>{escape(label)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _tier_table(title: str, label: str, groups: list[dict[str, Any]], min_contributors: int) -> str:
    rows = "".join(_tier_row(str(g["key"] or "unknown"), g, min_contributors) for g in groups)
    if not rows:
        rows = f'<tr><td colspan="{len(TIERS) + 5}" class="muted">no episodes</td></tr>'
    return f"<h2>{title}</h2><table>{_TIER_HEAD.format(label=label)}{rows}</table>"


def _table(title: str, label: str, groups: list[dict[str, Any]], min_contributors: int) -> str:
    rows = "".join(_row(str(g["key"] or "unknown"), g, min_contributors) for g in groups)
    if not rows:
        rows = '<tr><td colspan="11" class="muted">no episodes</td></tr>'
    return f"<h2>{title}</h2><table>{_HEAD.format(label=label)}{rows}</table>"


def render_html(report: dict[str, Any]) -> str:
    n = report["min_contributors"]
    team = escape(report["team"])
    span = " ".join(
        f"{word} {escape(report[key])}"
        for word, key in (("from", "since"), ("until", "until"))
        if report.get(key)
    )
    body = [
        f"<h1>Team {team}: what agents' edits were worth</h1>",
        f'<p class="muted">Generated {escape(report["generated_at"])} {span}. Groups with '
        f"fewer than {n} contributors show no figures. Rates show numerator/denominator; kept, "
        "edited and undone are shares of applied proposals with a final outcome.</p>",
        _table("Whole team", "team", [{**report["total"], "key": report["team"]}], n),
        _table("By agent", "agent", report["by_agent"], n),
        _table("By model", "model", report["by_model"], n),
        _table("By week", "week of", report["by_week"], n),
        '<p class="muted">Tiers count proposals by their current tier; the debt rate is debt '
        "over gold, silver, edited and debt. First test: median time from an episode's first "
        "applied proposal to its first linked run. Repairs: episodes whose failing run was "
        "followed by a passing one, of those with a failing run.</p>",
        _tier_table("Tiers by agent", "agent", report["by_agent"], n),
        _tier_table("Tiers by model", "model", report["by_model"], n),
    ]
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>agent-capture team report: {team}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_STYLE}</style></head><body>{''.join(body)}</body></html>"
    )
