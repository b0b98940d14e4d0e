"""The Shannon entropy of a string's characters: the one measure every engine reads (the
entropy floor of gitleaks' rules, the quoted strings detect-secrets' entropy plugins could
flag, the unquoted runs judged random)."""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

__all__ = ["shannon_entropy"]


@lru_cache(maxsize=8192)
def shannon_entropy(value: str) -> float:
    """Bits per character of `value` (0 for the empty string). Cached: an episode's values are
    measured when it is planned, again when each text holding them is read, and again by the
    second scan."""
    n = len(value)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())
