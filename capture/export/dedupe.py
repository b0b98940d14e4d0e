"""Dropping repeated examples: the same prompt and answer(s) written once per format.

Remembers a 16-byte digest per distinct row, so its memory grows with the distinct rows (16 MB
per million), which is why it is an option.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import orjson

__all__ = ["Deduper"]


class Deduper:
    def __init__(self) -> None:
        self._seen: set[bytes] = set()
        self.dropped = 0

    def first_time(self, row: dict[str, Any], keys: Sequence[str]) -> bool:
        """True the first time these columns' values are seen together."""
        values = [row.get(k) for k in keys]
        try:
            blob = orjson.dumps(values, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # what orjson refuses (a lone surrogate) the json module writes
            blob = json.dumps(values, sort_keys=True).encode()
        digest = hashlib.blake2b(blob, digest_size=16).digest()
        if digest in self._seen:
            self.dropped += 1
            return False
        self._seen.add(digest)
        return True
