"""Report periods: the period asked for, the one before it of the same length, how each splits
into whole rollup buckets and raw edges, and the local days and weeks rows are grouped by."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = [
    "Span",
    "calendar",
    "day_label",
    "day_start",
    "local_offset",
    "split",
    "week_label",
]

_DAY = 86400


@dataclass(frozen=True, slots=True)
class Span:
    """The report period [since, until) and the previous one [previous_since, since)."""

    since: float
    until: float

    @property
    def previous_since(self) -> float:
        return self.since - (self.until - self.since)

    @property
    def days(self) -> float:
        return (self.until - self.since) / _DAY


def split(
    lo: float, hi: float, spans: Sequence[int]
) -> tuple[list[tuple[int, int, int]], list[tuple[float, float]]]:
    """[lo, hi) as whole buckets of the largest span that fit, then of the next span in what is
    left at the edges, and so on: (span, first bucket, end bucket) triples; and the raw time
    ranges left over. `spans` go from largest to smallest, each a multiple of the next."""
    if hi <= lo:
        return [], []
    if not spans:
        return [], [(lo, hi)]
    span = spans[0]
    first = math.ceil(lo / span)
    end = math.floor(hi / span)
    # The divisions round: check the bucket edges against the times themselves.
    first += first * span < lo
    end -= end * span > hi
    if first >= end:
        return split(lo, hi, spans[1:])
    whole = [(span, first, end)]
    raw: list[tuple[float, float]] = []
    for edge_lo, edge_hi in ((lo, float(first * span)), (float(end * span), hi)):
        more, left = split(edge_lo, edge_hi, spans[1:])
        whole += more
        raw += left
    return whole, raw


def local_offset(ts: float) -> int:
    """The local UTC offset at `ts` in seconds, rounded to a quarter hour (every real offset is
    one; rollup buckets are quarter hours, so local days start on bucket boundaries)."""
    offset = datetime.fromtimestamp(ts).astimezone().utcoffset() or timedelta(0)
    return int(round(offset.total_seconds() / 900) * 900)


def day_start(now: float, offset: int) -> float:
    """Local midnight at or before `now`."""
    return float(math.floor((now + offset) / _DAY) * _DAY - offset)


def day_label(day: int) -> str:
    """A local day number (days since 1970-01-01 in local time) as YYYY-MM-DD."""
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=day)).date().isoformat()


def week_label(week: int) -> str:
    """A week number ((day + 3) // 7: weeks start on Monday) as its Monday, YYYY-MM-DD."""
    return day_label(week * 7 - 3)


def calendar(since: float, until: float, offset: int, by: str) -> list[str]:
    """Every local day (or week) label that [since, until) touches, in order."""
    first = math.floor((since + offset) / _DAY)
    last = math.floor((max(until - 1e-6, since) + offset) / _DAY)
    if by == "week":
        return [week_label(w) for w in range((first + 3) // 7, (last + 3) // 7 + 1)]
    return [day_label(d) for d in range(first, last + 1)]
