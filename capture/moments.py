"""Which moments are believable. A time that enters from outside (a hook payload, an editor's
notification, a transcript, an upload) is checked against a sane range before it is stored, and
a time already stored is read only when it can be shown: one far-future value must not take
every command that formats it down.

Pure: the caller hands in the wall clock."""

from __future__ import annotations

import logging
import math

__all__ = [
    "AHEAD",
    "EARLIEST",
    "EARLIEST_READABLE",
    "LATEST_READABLE",
    "believable",
    "checked",
    "checked_duration",
    "formattable",
    "readable",
]

log = logging.getLogger(__name__)

#: 2000-01-01T00:00:00Z: no coding agent recorded anything before.
EARLIEST = 946_684_800.0
#: How far ahead of the wall clock a reported time may be (clocks drift, zones get mixed up).
AHEAD = 86_400.0
#: The stored times the reading commands show: from the epoch (what the store wrote before this
#: check, and what tests and fixtures build by hand)...
EARLIEST_READABLE = 0.0
#: ...to 2200-01-01T00:00:00Z: a stored time at or after it is not shown (our own due times, a
#: day or so ahead, are far below it; a year-10000 value cannot even be formatted).
LATEST_READABLE = 7_258_118_400.0
#: A test run or a turn longer than a week is a bad value, not a measurement.
LONGEST = 7 * 86_400.0


def believable(ts: float, *, wall: float) -> bool:
    """`ts` lies between 2000 and a day after the wall clock."""
    return math.isfinite(ts) and EARLIEST <= ts <= wall + AHEAD


def readable(ts: float | None) -> bool:
    """A stored time the read paths show (None is a missing time, not a bad one)."""
    return ts is None or (math.isfinite(ts) and EARLIEST_READABLE <= ts < LATEST_READABLE)


def formattable(ts: float) -> bool:
    """A datetime can hold it (years 1 to 9999)."""
    return math.isfinite(ts) and _FIRST_DATETIME <= ts < _AFTER_LAST_DATETIME


_FIRST_DATETIME = -62_135_596_800.0
_AFTER_LAST_DATETIME = 253_402_300_800.0


def checked(ts: float, *, wall: float, what: str) -> float:
    """`ts`, or the wall clock when it is not believable (logged: the record is kept, with the
    moment it was received)."""
    if believable(ts, wall=wall):
        return ts
    log.warning("%s %r is outside 2000 .. a day from now: recorded at the time received", what, ts)
    return wall


def checked_duration(seconds: float | None, *, what: str) -> float | None:
    """A duration, or None when it is negative, not finite, or longer than a week (logged)."""
    if seconds is None or (math.isfinite(seconds) and 0 <= seconds <= LONGEST):
        return seconds
    log.warning("%s %r is not a plausible duration: dropped", what, seconds)
    return None
