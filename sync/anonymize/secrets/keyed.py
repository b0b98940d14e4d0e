"""HMAC-SHA256 under the few keys the pipeline uses, each key's state computed once."""

from __future__ import annotations

import hashlib
import hmac
from functools import lru_cache

__all__ = ["hmac_sha256"]


@lru_cache(maxsize=16)
def _keyed(key: bytes) -> hmac.HMAC:
    return hmac.new(key, digestmod=hashlib.sha256)


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """Equal to `hmac.digest(key, message, "sha256")`. An episode needs several digests (ids,
    directory names, secret placeholders) under the same two keys: copying the keyed state is a
    third faster than deriving it from the key each time."""
    h = _keyed(key).copy()
    h.update(message)
    return h.digest()
