"""Points in time given on the command line: '7d' (ago), '2026-11-30', or an ISO timestamp."""

from __future__ import annotations

from datetime import UTC, datetime

from capture.edits.windows import parse_duration
from capture.errors import InputError

__all__ = ["parse_since"]


def parse_since(text: str, now: float) -> float:
    try:
        return now - parse_duration(text)
    except Exception:  # noqa: BLE001 - not a duration: try a date
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(
            f"not a duration or date: {text!r} (use e.g. 7d, 12h, 2026-11-30)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
