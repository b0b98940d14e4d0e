"""Checkpoint windows: the fixed times after an edit at which its region is observed."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from capture.errors import ConfigError

__all__ = [
    "DEFAULT_LATE",
    "DEFAULT_WINDOWS",
    "LATE",
    "LATE_AFTER",
    "Window",
    "format_duration",
    "lateness",
    "parse_duration",
    "parse_windows",
]

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")

LATE = "late"


@dataclass(frozen=True, slots=True)
class Window:
    label: str
    seconds: float


def parse_duration(text: str) -> float:
    """'30s' -> 30.0, '2m' -> 120.0; a bare number is seconds."""
    match = _DURATION.match(text)
    if not match:
        raise ConfigError(f"not a duration: {text!r} (use e.g. 30s, 2m, 10m, 24h)")
    value = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if value <= 0:
        raise ConfigError(f"a duration must be positive: {text!r}")
    return value


def format_duration(seconds: float) -> str:
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("m", 60.0), ("s", 1.0), ("ms", 0.001)):
        count = round(seconds / size, 6)
        if seconds >= size and count.is_integer():
            return f"{int(count)}{unit}"
    return f"{seconds:g}s"


def parse_windows(spec: str | Iterable[str]) -> tuple[Window, ...]:
    """Windows sorted by time, duplicates dropped; their labels are canonical ('120s' -> '2m')."""
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    seconds = sorted({parse_duration(p) for p in parts if str(p).strip()})
    if not seconds:
        raise ConfigError("no checkpoint windows given")
    return tuple(Window(format_duration(s), s) for s in seconds)


DEFAULT_WINDOWS = parse_windows("30s,2m,10m")
DEFAULT_LATE = Window(LATE, 86400.0)


#: A checkpoint measured more than this after its due time says so, with the delay: it read the
#: file as it was then, not at the window (no editor was open and no hook came by in time).
LATE_AFTER = 2.0


def lateness(due_at: float, measured_at: float) -> float | None:
    """How late a checkpoint measured the file, when late enough to say so (None: on time)."""
    delay = measured_at - due_at
    return round(delay, 3) if delay > LATE_AFTER else None
