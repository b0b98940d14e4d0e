"""How many uploads the collector works on at once: at most a few per token and a few in all,
so one token's requests (a burst of zip bombs among them) never hold more memory than a known
share, and another team's upload always finds room.

A request waits its turn (the body stays in the socket meanwhile, not in memory); one that
waits longer than `wait_s` is answered 429 with Retry-After. One event loop per worker: the
counts are per worker process."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sync.collector.errors import ApiError

__all__ = ["Admission"]

log = logging.getLogger(__name__)


class Admission:
    def __init__(self, per_token: int, total: int, wait_s: float = 30.0) -> None:
        self.per_token = per_token
        self.total = total
        self.wait_s = wait_s
        self._tokens: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}
        self._all: asyncio.Semaphore | None = None

    @asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """Hold one of the token's slots and one of all, in that order (a token's queue never
        takes a slot of all while it waits for its own)."""
        if self._all is None:
            self._all = asyncio.Semaphore(self.total)
        entry = self._tokens.get(key)
        if entry is None:
            entry = self._tokens[key] = (asyncio.Semaphore(self.per_token), [0])
        mine, users = entry
        users[0] += 1
        try:
            await self._acquire(mine, "this token's")
            try:
                await self._acquire(self._all, "the collector's")
                try:
                    yield
                finally:
                    self._all.release()
            finally:
                mine.release()
        finally:
            users[0] -= 1
            if users[0] == 0:
                self._tokens.pop(key, None)

    async def _acquire(self, semaphore: asyncio.Semaphore, whose: str) -> None:
        try:
            await asyncio.wait_for(semaphore.acquire(), self.wait_s)
        except TimeoutError:
            log.warning("an upload waited %.0f s for one of %s slots: refused", self.wait_s, whose)
            raise ApiError(
                429,
                "too_many_concurrent",
                f"{whose} uploads in progress are at their limit; retry later",
                headers={"Retry-After": str(max(1, int(self.wait_s // 10)))},
            ) from None
