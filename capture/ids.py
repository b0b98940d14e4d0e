"""Record ids: time-ordered, so `ORDER BY id` is creation order, and unique across processes."""

from __future__ import annotations

import secrets

__all__ = ["new_id"]


def new_id(now: float) -> str:
    """16 hex digits: 11 of milliseconds since the epoch, 5 random."""
    return f"{int(now * 1000):011x}{secrets.randbelow(1 << 20):05x}"
