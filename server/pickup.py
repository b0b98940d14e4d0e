"""Proposals recorded by other processes (the agents' hook commands), picked up within a second.

A thread with its own connection asks SQLite every quarter second whether anyone committed
(``PRAGMA data_version``, no table read) and only then reads the proposals inserted since the
last one it saw. Its first read is every live proposal: a restarted server resumes tracking
where the store left off.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from capture.store.database import Store
from server.feature import Context, Feature
from server.proposals import Proposals
from server.stored import StoredProposal, load_live, max_proposal_rowid

__all__ = ["Pickup", "ProposalPickup"]

log = logging.getLogger(__name__)

INTERVAL = 0.25

#: The pickup connection's page cache, in KiB: it reads only the rows after the last it saw,
#: so the library's default 2 MB would hold pages it never reads again.
PICKUP_CACHE_KIB = 256


class Pickup:
    def __init__(
        self,
        db_path: Path,
        loop: asyncio.AbstractEventLoop,
        deliver: Callable[[list[StoredProposal]], None],
        known: set[str],
        interval: float = INTERVAL,
    ) -> None:
        self._db_path = db_path
        self._loop = loop
        self._deliver = deliver
        self._known = known
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="capture-pickup", daemon=True)
        self.polls = 0
        self.picked = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)

    def _run(self) -> None:
        store = None
        while store is None and not self._stop.is_set():
            try:
                store = Store.open(self._db_path, cache_kib=PICKUP_CACHE_KIB)
            except Exception as exc:  # noqa: BLE001 - keep trying: the writer reports it too
                log.error("pickup cannot open the store: %s", exc)
                self._stop.wait(5)
        if store is None:
            return
        try:
            last_rowid = self._read(store, None)
            version = None
            while not self._stop.wait(self._interval):
                self.polls += 1
                try:
                    current = store.data_version()
                    if current == version:
                        continue
                    version = current
                    last_rowid = self._read(store, last_rowid)
                except Exception:  # noqa: BLE001 - a failed poll is retried at the next tick
                    log.exception("polling for proposals failed")
        finally:
            store.close()

    def _read(self, store: Store, after: int | None) -> int:
        store.begin_read()
        try:
            newest = max_proposal_rowid(store)
            found = (
                [] if after is not None and newest <= after else load_live(store, after_rowid=after)
            )
        finally:
            store.commit()
        fresh = [s for s in found if s.proposal_id not in self._known and s.rowid <= newest]
        if fresh:
            self.picked += len(fresh)
            try:
                self._loop.call_soon_threadsafe(self._deliver, fresh)
            except RuntimeError:
                return newest  # the loop is closed: the server is stopping
        return newest


class ProposalPickup(Feature):
    """The pickup thread as a feature: it runs from the loop's start (before ``initialize``, so
    a restarted server resumes at once) to shutdown, handing what it reads to the proposals."""

    def __init__(self, context: Context, proposals: Proposals) -> None:
        super().__init__(context)
        self.proposals = proposals
        self.thread: Pickup | None = None

    def serving(self) -> None:
        proposals = self.proposals
        self.thread = Pickup(
            self.context.config.paths.db, self.context.loop, proposals.picked_up, proposals.known
        )
        self.thread.start()

    async def stop(self) -> None:
        if self.thread is not None:
            await asyncio.to_thread(self.thread.stop)
