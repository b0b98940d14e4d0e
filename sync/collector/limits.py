"""The collector's limits, and the per-token rate limiter (a token bucket).

The bucket is a pure function of (state, now); `RateLimiter` keeps one per token in memory, so
with several replicas each enforces its own share: a limit of R per replica admits up to N x R
behind a load balancer.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

__all__ = ["Bucket", "Limits", "RateLimiter", "take"]


@dataclass(frozen=True, slots=True)
class Limits:
    max_body_bytes: int = 16 * 1024 * 1024  # on the wire (gzip'd)
    # after inflating, checked while inflating (the uploader's batches stay under 4 MB)
    max_decoded_bytes: int = 16 * 1024 * 1024
    max_field_bytes: int = 2 * 1024 * 1024  # any one text field (a prompt, a hunk's text)
    # uploads worked on at once, per token and in all (per worker process); others wait
    max_uploads_per_token: int = 2
    max_uploads: int = 8
    # slow clients: request headers within this, no pause in a body longer than this
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 0  # 0: what the open-file limit leaves (see `connections`)
    max_batch: int = 1000  # episodes per request
    rate: float = 20.0  # requests per second per token
    burst: int = 40
    max_level: str = "full"  # the most detailed level this collector stores
    min_contributors: int = 5  # below this, a report group shows no figures


@dataclass(frozen=True, slots=True)
class Bucket:
    tokens: float
    updated: float


def take(bucket: Bucket | None, now: float, rate: float, burst: int) -> tuple[bool, Bucket, int]:
    """(allowed, new state, seconds to wait before retrying when not allowed)."""
    if bucket is None:
        bucket = Bucket(float(burst), now)
    tokens = min(float(burst), bucket.tokens + max(0.0, now - bucket.updated) * rate)
    if tokens >= 1.0:
        return True, Bucket(tokens - 1.0, now), 0
    wait = max(1, math.ceil((1.0 - tokens) / rate)) if rate > 0 else 60
    return False, Bucket(tokens, now), wait


class RateLimiter:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, Bucket] = {}
        self._lock = threading.Lock()

    def allow(self, key: str, now: float) -> tuple[bool, int]:
        with self._lock:
            allowed, bucket, wait = take(self._buckets.get(key), now, self.rate, self.burst)
            self._buckets[key] = bucket
            return allowed, wait
