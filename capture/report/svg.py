"""Inline SVG charts for the HTML report: plain strings, no scripts. Colours come from CSS
classes the page defines for light and dark mode."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["line_chart", "stacked_bars"]

_W, _H = 720, 260
_LEFT, _RIGHT, _TOP, _BOTTOM = 48, 12, 12, 40


def _nice_max(value: float) -> float:
    if value <= 0:
        return 4.0  # ticks 0, 1, 2, 3, 4: whole counts, not 0, 0, 0, 1, 1
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000):
        top = step * 4
        if value <= top:
            return float(top)
    magnitude = 10 ** (len(str(int(value))) - 1)
    return float(-(-value // magnitude) * magnitude)


def _frame(title: str, body: list[str], css: str) -> str:
    return (
        f'<svg class="chart {css}" viewBox="0 0 {_W} {_H}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def _y_axis(top: float, fmt: str, plot_h: float) -> list[str]:
    out = []
    for i in range(5):
        value = top * i / 4
        y = _TOP + plot_h - plot_h * i / 4
        label = f"{value:.0%}" if fmt == "%" else f"{value:,.0f}"
        out.append(
            f'<line class="grid" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{label}</text>'
        )
    return out


def stacked_bars(
    title: str,
    columns: Sequence[tuple[str, Mapping[str, int]]],
    series: Sequence[str],
) -> str:
    """One bar per column (a day, a week), stacked by series (outcomes), bottom to top."""
    plot_w = _W - _LEFT - _RIGHT
    plot_h = _H - _TOP - _BOTTOM
    top = _nice_max(max((sum(v.values()) for _, v in columns), default=0))
    body = _y_axis(top, "n", plot_h)
    n = max(len(columns), 1)
    slot = plot_w / n
    width = max(slot * 0.7, 1.0)
    every = max(1, round(n / 10))
    for i, (label, values) in enumerate(columns):
        x = _LEFT + slot * i + (slot - width) / 2
        y = float(_TOP + plot_h)
        for name in series:
            count = values.get(name, 0)
            if not count:
                continue
            h = plot_h * count / top
            y -= h
            body.append(
                f'<rect class="bar o-{escape(name)}" x="{x:.1f}" y="{y:.1f}" '
                f'width="{width:.1f}" height="{h:.1f}"><title>{escape(label)}: {count} '
                f"{escape(name)}</title></rect>"
            )
        if i % every == 0:
            body.append(
                f'<text class="tick" x="{x + width / 2:.1f}" y="{_H - _BOTTOM + 16}" '
                f'text-anchor="middle">{escape(label[5:] if len(label) == 10 else label)}</text>'
            )
    if not any(sum(v.values()) for _, v in columns):
        body.append(
            f'<text class="empty" x="{_W / 2}" y="{_H / 2}" text-anchor="middle">'
            "no proposals in this period</text>"
        )
    return _frame(title, body, "bars")


def line_chart(
    title: str,
    x_labels: Sequence[str],
    lines: Sequence[tuple[str, Sequence[float | None]]],
) -> str:
    """One line per series over categorical x (the checkpoint windows), y from 0 to 100%."""
    plot_w = _W - _LEFT - _RIGHT
    plot_h = _H - _TOP - _BOTTOM
    body = _y_axis(1.0, "%", plot_h)
    n = max(len(x_labels), 1)
    step = plot_w / max(n - 1, 1) if n > 1 else 0.0

    def x_at(i: int) -> float:
        return _LEFT + (step * i if n > 1 else plot_w / 2)

    for i, label in enumerate(x_labels):
        body.append(
            f'<text class="tick" x="{x_at(i):.1f}" y="{_H - _BOTTOM + 16}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    for k, (name, values) in enumerate(lines):
        points = [(x_at(i), _TOP + plot_h * (1 - v)) for i, v in enumerate(values) if v is not None]
        if not points:
            continue
        path = " ".join(
            f"{'M' if j == 0 else 'L'}{x:.1f},{y:.1f}" for j, (x, y) in enumerate(points)
        )
        if len(points) > 1:  # a single point is a dot only
            body.append(
                f'<path class="line s{k % 8}" d="{path}"><title>{escape(name)}</title></path>'
            )
        for (x, y), v in zip(points, [v for v in values if v is not None], strict=True):
            body.append(
                f'<circle class="dot s{k % 8}" cx="{x:.1f}" cy="{y:.1f}" r="3.5">'
                f"<title>{escape(name)}: {v:.1%}</title></circle>"
            )
    if not any(v is not None for _, values in lines for v in values):
        body.append(
            f'<text class="empty" x="{_W / 2}" y="{_H / 2}" text-anchor="middle">'
            "no checkpoint observed in this period</text>"
        )
    return _frame(title, body, "lines")
