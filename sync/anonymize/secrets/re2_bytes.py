"""re2 searches on bytes without the `re2` module's per-call wrapper.

`re2.compile(...).search` builds a generator and a match object on every call, about 0.7 us,
more than re2 itself takes on a line; the plan makes thousands of such calls per second. These
functions call the compiled expression's own `Match` (what the wrapper calls), and fall back to
the wrapper where a version of it lacks that attribute.
"""

from __future__ import annotations

from typing import Any

import re2

__all__ = ["found", "found_in_text"]

_UNANCHORED = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
_NO_SPAN = (-1, -1)


def found(pattern: Any, data: bytes, pos: int = 0, endpos: int | None = None) -> bool:
    """Does `pattern` (compiled on bytes) match somewhere in `data[pos:endpos]`?"""
    end = len(data) if endpos is None else endpos
    if _UNANCHORED is not None:
        try:
            return bool(pattern._regexp.Match(_UNANCHORED, data, pos, end)[0] != _NO_SPAN)
        except AttributeError:  # pragma: no cover - another version of the wrapper
            pass
    return pattern.search(data, pos, end) is not None


def found_in_text(pattern: Any, text: str) -> bool:
    """Does `pattern` (compiled on str) match somewhere in `text` (which UTF-8 can hold)? The
    wrapper reads `text` as its UTF-8, as here, and then maps offsets back, which a
    yes-or-no does not need."""
    if _UNANCHORED is not None:
        return found(pattern, text.encode("utf-8"))
    return pattern.search(text) is not None  # pragma: no cover - another version of the wrapper
