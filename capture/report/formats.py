"""How figures read, in the terminal and on the page: counts, rates with their parts, durations,
and changes with the direction that is good news."""

from __future__ import annotations

from typing import Literal

from capture.report.figures import Change
from capture.report.rows import Rate

__all__ = ["change_text", "format_count", "format_rate", "format_seconds", "value_text"]

# Figures for which a rise is good news or bad news; the others are neutral.
_GOOD_UP = {"acceptance", "kept_rate", "test_pass_rate", "repair_rate"}
_BAD_UP = {"undone_rate", "undone_rate_observed", "lost_rate", "first_test_median_s"}


def format_count(n: float) -> str:
    n = round(n)
    if abs(n) >= 100_000:
        return f"{n / 1000:,.0f}k"
    if abs(n) >= 10_000:
        return f"{n / 1000:.1f}k"
    return f"{n:,}"


def format_rate(rate: Rate, *, parts: bool = True) -> str:
    if rate.value is None:
        return "-"
    pct = f"{rate.value:.0%}"
    if not parts:
        return pct
    return f"{pct} {format_count(rate.numerator)}/{format_count(rate.denominator)}"


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = abs(seconds)
    sign = "-" if seconds < 0 else ""
    if s < 60:
        return f"{sign}{s:.0f}s" if s >= 10 else f"{sign}{s:.1f}s"
    if s < 3600:
        return f"{sign}{int(s // 60)}m{int(s % 60):02d}s"
    return f"{sign}{int(s // 3600)}h{int(s % 3600 // 60):02d}m"


def value_text(kind: str, value: float | None) -> str:
    if value is None:
        return "-"
    if kind == "rate":
        return f"{value:.0%}"
    if kind == "seconds":
        return format_seconds(value)
    return format_count(value)


def change_text(change: Change) -> tuple[str, Literal["good", "bad", "neutral", "none"]]:
    """'+5.0 pp', '+12', '-30s' or '±0', and whether the move is good news ('none': unknown)."""
    delta = change.delta
    if delta is None:
        return "-", "none"
    kind = change.figure.kind
    if kind == "rate":
        text, zero = f"{delta * 100:+.1f} pp", abs(delta) < 0.0005
    elif kind == "seconds":
        text, zero = ("+" if delta >= 0 else "") + format_seconds(delta), abs(delta) < 0.05
    else:
        text, zero = ("+" if delta >= 0 else "-") + format_count(abs(delta)), delta == 0
    if zero:
        return "±0", "neutral"
    fid = change.figure.id
    if fid in _GOOD_UP or fid.startswith("retention_"):
        return text, "good" if delta > 0 else "bad"
    if fid in _BAD_UP:
        return text, "bad" if delta > 0 else "good"
    return text, "neutral"
