"""Replacing each secret found with `<SECRET:kind:hmac8>`.

The placeholder keeps what a reader of an episode needs (that a secret of this kind stood here,
and whether two places hold the same one: the same value gives the same 8 hex digits) and
nothing else: the digits are a salted HMAC of the value, and the salt never leaves the machine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sync.anonymize.secrets.engine import Span
from sync.anonymize.secrets.keyed import hmac_sha256

__all__ = ["PLACEHOLDER", "inside_placeholder", "redact"]

PLACEHOLDER = re.compile(r"<SECRET:[a-z0-9_]+:[0-9a-f]{8}>")


def inside_placeholder(text: str, start: int, end: int) -> bool:
    """Does `text[start:end]` overlap a placeholder already written?"""
    if "<SECRET:" not in text:
        return False
    return any(m.start() < end and start < m.end() for m in PLACEHOLDER.finditer(text))


def redact(text: str, spans: Sequence[Span], key: bytes) -> tuple[str, list[tuple[str, str]]]:
    """The text with each span (in order, not overlapping) replaced by its placeholder; and
    (value, placeholder) pairs."""
    if not spans:
        return text, []
    parts: list[str] = []
    replaced: list[tuple[str, str]] = []
    at = 0
    for f in spans:
        value = text[f.start : f.end]
        digest = hmac_sha256(key, value.encode("utf-8", "surrogatepass")).hex()[:8]
        placeholder = f"<SECRET:{f.kind}:{digest}>"
        replaced.append((value, placeholder))
        parts.append(text[at : f.start])
        parts.append(placeholder)
        at = f.end
    parts.append(text[at:])
    return "".join(parts), replaced
