"""Lone surrogates: carried through the store without breaking a document.

JSON may carry a lone UTF-16 surrogate (``"\\ud800"``) and an editor may send one when a user
types or pastes half of a pair. The document mirror keeps it as it is (it is one UTF-16 unit
and three ``surrogatepass`` UTF-8 bytes, and positions after it must count it so), but SQLite
stores text as UTF-8, which has no lone surrogates: binding such a string fails, and with it
the job that wrote the buffer or recorded a proposal there.

So text bound for the store is escaped first: each lone surrogate becomes one code point of
the last 2,048 of Unicode (plane 16, private use), the same offset from U+10F800 as the
surrogate from U+D800. One code point for one code point: every offset, region and
similarity measured in the escaped text is the one of the real text, and the mapping can be
undone (:func:`unescape`).
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import Any, TypeVar

__all__ = ["escape", "escape_fields", "has_surrogates", "unescape"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED = re.compile("[\U0010f800-\U0010ffff]")
_SHIFT = 0x10F800 - 0xD800

T = TypeVar("T")


def has_surrogates(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def escape(text: str) -> str:
    """``text`` with each lone surrogate replaced by its stand-in (same length)."""
    if text.isascii():
        return text
    return _SURROGATE.sub(lambda m: chr(ord(m.group()) + _SHIFT), text)


def unescape(text: str) -> str:
    """The inverse of :func:`escape` (for text that held no stand-ins of its own)."""
    if text.isascii():
        return text
    return _ESCAPED.sub(lambda m: chr(ord(m.group()) - _SHIFT), text)


def escape_fields(obj: T) -> T:
    """A copy of the dataclass ``obj`` with its string fields escaped (itself if none change)."""
    changes: dict[str, Any] = {}
    for f in fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        if isinstance(value, str):
            escaped = escape(value)
            if escaped is not value and escaped != value:
                changes[f.name] = escaped
    return replace(obj, **changes) if changes else obj  # type: ignore[type-var]
