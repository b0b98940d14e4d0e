"""Record ids: time-ordered, so `ORDER BY id` is creation order, and unique across processes."""

from __future__ import annotations

import os

__all__ = ["new_id"]

_last_ms = -1
_sequence = 0


def new_id(now: float) -> str:
    """20 hex digits: milliseconds since the epoch (11), a per-process sequence within that
    millisecond (3, so backfills stamping many records with one time stay ordered and distinct),
    and 6 random digits against other processes."""
    global _last_ms, _sequence
    ms = int(now * 1000)
    _sequence = (_sequence + 1) % 4096 if ms == _last_ms else 0
    _last_ms = ms
    # os.urandom rather than secrets: the hook path pays for every import.
    random = int.from_bytes(os.urandom(3), "big")
    return f"{ms:011x}{_sequence:03x}{random:06x}"
