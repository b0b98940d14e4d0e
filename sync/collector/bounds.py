"""What one upload may cost: its body inflated as it arrives, under a cap checked while
inflating (a 60 KB gzip body that would inflate to gigabytes stops at the cap, the compressed
body never held whole), and no single text field over a cap.

A gzip body may hold several members one after the other (RFC 1952 allows it; `cat a.gz b.gz`
makes one): every member is read and their output joined, as `gzip -d` does, at most
MAX_GZIP_MEMBERS of them. Anything after a member that is not another whole member (garbage,
zero padding, a truncated member) is a 400: nothing is ignored."""

from __future__ import annotations

import zlib
from typing import Any

from sync.collector.errors import ApiError
from sync.collector.ingest import MAX_GZIP_MEMBERS

__all__ = ["BodyStream", "oversized_field"]


class BodyStream:
    """The request body's JSON bytes, fed chunk by chunk as they arrive."""

    def __init__(self, content_encoding: str | None, max_decoded: int) -> None:
        encoding = (content_encoding or "identity").strip().lower()
        if encoding not in ("identity", "gzip", "x-gzip"):
            raise ApiError(
                415, "unsupported_encoding", f"Content-Encoding {encoding!r}: send gzip or identity"
            )
        self.gzip = encoding != "identity"
        self.max_decoded = max_decoded
        self.size = 0
        self.members = 0
        self._parts: list[bytes] = []
        self._inflater: Any = None

    def _keep(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.max_decoded:
            self._parts.clear()  # what was inflated goes at once, not with the request
            raise ApiError(
                413, "body_too_large", f"the body inflates to more than {self.max_decoded} bytes"
            )
        if data:
            self._parts.append(data)

    def feed(self, chunk: bytes) -> None:
        if not self.gzip:
            self._keep(chunk)
            return
        rest = chunk
        while rest:
            if self._inflater is None:
                if self.members >= MAX_GZIP_MEMBERS:
                    raise ApiError(
                        400, "bad_gzip", f"the body holds more than {MAX_GZIP_MEMBERS} gzip members"
                    )
                self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            inflater = self._inflater
            try:
                # Never more than one byte past the cap: the budget is never 0 (which zlib
                # would read as "no limit"), and output that reaches it is a 413 at once.
                self._keep(inflater.decompress(rest, self.max_decoded - self.size + 1))
            except zlib.error as exc:
                where = f" after member {self.members}" if self.members else ""
                raise ApiError(
                    400, "bad_gzip", f"the body is not valid gzip{where}: {exc}"
                ) from None
            if inflater.eof:
                self.members += 1
                self._inflater = None
                rest = inflater.unused_data
            else:
                rest = inflater.unconsumed_tail  # empty: all input taken (else the cap hit)

    def finish(self) -> bytes:
        if self.gzip and (self._inflater is not None or self.members == 0):
            raise ApiError(400, "bad_gzip", "the gzip stream is truncated")
        data = self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)
        self._parts.clear()
        return data


def oversized_field(value: Any, limit: int, path: str = "") -> str | None:
    """The path of the first text field over `limit` bytes of UTF-8 (`episodes[0].episode.
    prompt`), or None."""
    if isinstance(value, str):
        if len(value) > limit or (
            len(value) * 4 > limit and len(value.encode("utf-8", "surrogatepass")) > limit
        ):
            return path or "(body)"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and len(key) > limit:
                return f"{path}.(key)" if path else "(key)"
            found = oversized_field(item, limit, f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = oversized_field(item, limit, f"{path}[{i}]")
            if found:
                return found
    return None
