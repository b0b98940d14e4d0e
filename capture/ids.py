"""Record ids: time-ordered, so `ORDER BY id` is creation order, and unique across processes."""

from __future__ import annotations

import os

__all__ = ["new_id"]


def new_id(now: float) -> str:
    """16 hex digits: 11 of milliseconds since the epoch, 5 random."""
    # os.urandom, not secrets: the same randomness without importing hmac and hashlib on the
    # hook path.
    return f"{int(now * 1000):011x}{int.from_bytes(os.urandom(3), 'big') & 0xFFFFF:05x}"
