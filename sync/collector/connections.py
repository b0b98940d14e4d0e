"""The collector's guard against slow clients (slowloris): a connection must send its request
headers within `header_timeout_s` (each request on a kept-alive connection too), and the open
connections stay below the process's open-file limit. At that limit, a new connection closes
the oldest one that has not sent its headers yet (a legitimate client sends them at once, so
it is the trickler that goes), with a warning in the log at most once a minute.

Uvicorn's h11 protocol, with these checks added; the body's own read timeout is the route's
(`http.read_body_into`). One guard per worker process, configured from the limits."""

from __future__ import annotations

import logging
import resource
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["GuardedH11Protocol", "configure", "connection_cap"]

log = logging.getLogger("capture.collector")

#: Files the process needs besides its connections: the database, its WAL, logs, the pool.
_RESERVED_FILES = 64


def connection_cap(configured: int, backlog: int) -> int:
    """The most connections held open: the configured number, or (0) what the open-file limit
    leaves after the files the process needs and one accept burst (`backlog`)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = soft - _RESERVED_FILES - backlog if soft != resource.RLIM_INFINITY else 1 << 16
    room = max(16, room)
    return min(configured, room) if configured > 0 else room


class _Guard:
    def __init__(self) -> None:
        self.header_timeout_s = 10.0
        self.cap = 1 << 16
        self.open = 0
        #: Connections waiting for request headers, oldest first (a dict keeps the order).
        self.waiting: dict[GuardedH11Protocol, None] = {}
        self.last_warning = 0.0
        self.evicted = 0

    def opened(self, conn: GuardedH11Protocol) -> None:
        self.open += 1
        self.waiting[conn] = None
        if self.open <= self.cap:
            return
        oldest = next(iter(self.waiting))
        self.evicted += 1
        now = time.monotonic()
        if now - self.last_warning >= 60:
            self.last_warning = now
            log.warning(
                "%d connections open, at the limit of %d (below the open-file limit): closing "
                "the oldest that has not sent its request headers (%d closed so far)",
                self.open,
                self.cap,
                self.evicted,
            )
        oldest.drop()

    def closed(self, conn: GuardedH11Protocol) -> None:
        self.open -= 1
        self.waiting.pop(conn, None)


GUARD = _Guard()


def configure(header_timeout_s: float, cap: int) -> None:
    GUARD.header_timeout_s = header_timeout_s
    GUARD.cap = cap


class GuardedH11Protocol(H11Protocol):
    """h11 with a deadline on request headers and the connection cap."""

    _requests = 0
    _counted = False

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._counted = True
        GUARD.opened(self)
        self._headers_by(0)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted:
            self._counted = False
            GUARD.closed(self)
        super().connection_lost(exc)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not None and self.cycle is not cycle:
            self._requests += 1  # a request's headers are in
            GUARD.waiting.pop(self, None)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            GUARD.waiting[self] = None
            self._headers_by(self._requests)

    def _headers_by(self, seen: int) -> None:
        self.loop.call_later(GUARD.header_timeout_s, self._header_deadline, seen)

    def _header_deadline(self, seen: int) -> None:
        if self._requests == seen and not self.transport.is_closing():
            self.drop()

    def drop(self) -> None:
        """Close a connection that has not sent its request headers (no answer: it asked
        nothing yet)."""
        GUARD.waiting.pop(self, None)
        if not self.transport.is_closing():
            self.transport.close()
