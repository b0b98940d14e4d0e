"""Record ids: time-ordered, so `ORDER BY id` is creation order, and unique across processes."""

from __future__ import annotations

import os

__all__ = ["new_id", "unique_prefixes"]

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


def unique_prefixes(ids: list[str], among: list[str], minimum: int = 7) -> dict[str, str]:
    """For each of `ids`, its shortest prefix (at least `minimum` digits, as git shows commits)
    that no other id of `among` shares: what `capture show` resolves back to that id."""
    ordered = sorted(set(among) | set(ids))
    position = {value: i for i, value in enumerate(ordered)}

    def common(a: str, b: str) -> int:
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return n

    found: dict[str, str] = {}
    for value in ids:
        i = position[value]
        # in sorted order, the longest prefix shared with any other id is with a neighbour
        shared = max(
            common(value, ordered[i - 1]) if i > 0 else 0,
            common(value, ordered[i + 1]) if i + 1 < len(ordered) else 0,
        )
        found[value] = value[: max(minimum, shared + 1)]
    return found
