"""Checkpoints on time: one timer, armed for the earliest due checkpoint.

When it fires, proposals in open documents are measured in their buffers (``via = editor``),
then every other due checkpoint, whoever recorded its proposal, against the file on disk
(``via = disk``). Both run on the writer thread; the timer re-arms from what is still due in
memory and in the store.
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import Any

from capture.config import Config
from capture.recording.observer import ObserveReport, observe_due
from capture.store.database import Store
from server.feature import Context, Feature
from server.proposals import Proposals
from server.watcher import DiskWatcher

__all__ = ["Checkpoints"]

log = logging.getLogger(__name__)

#: Even with nothing due, look at the store this often (other processes schedule checkpoints).
RECHECK = 30.0
#: A file being written when a checkpoint is due is read once it has been quiet (a read in the
#: middle of a write sees a truncated file), but never later than this after the due time.
MAX_SETTLE = 1.0
#: After ``initialized``, wait this long before measuring overdue checkpoints: a restarted
#: server hears the editor reopen its buffers first, so unsaved text is not judged from disk.
STARTUP_GRACE = 1.0


class Checkpoints(Feature):
    def __init__(self, context: Context, proposals: Proposals, watcher: DiskWatcher) -> None:
        super().__init__(context)
        self.proposals = proposals
        self.watcher = watcher
        self._handle: asyncio.TimerHandle | None = None
        self._armed_for = float("inf")
        self._running = False
        self._wanted = float("inf")
        self._not_before = float("inf")  # nothing fires before the client is initialized
        self.observed = 0
        self.settled = 0

    def initialized(self) -> None:
        self._not_before = time.time() + STARTUP_GRACE
        self.schedule(self._not_before)

    async def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def diagnostics(self) -> dict[str, Any]:
        return {"checkpointsObserved": self.observed}

    def checkpoint_due(self, due_at: float) -> None:
        self.schedule(due_at)

    def schedule(self, due_at: float) -> None:
        """Make sure the timer fires by ``due_at``."""
        if self._running or self._not_before == float("inf"):
            self._wanted = min(self._wanted, due_at)
            return
        if due_at < self._not_before:
            self._wanted = min(self._wanted, due_at)
            due_at = self._not_before
        if self._handle is not None and due_at >= self._armed_for:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._armed_for = due_at
        self._handle = self.context.loop.call_later(max(due_at - time.time(), 0.0), self._fire)

    def _fire(self) -> None:
        self._handle = None
        if self.watcher.settling and time.time() < self._armed_for + MAX_SETTLE:
            self._handle = self.context.loop.call_later(0.05, self._fire)
            return
        self._armed_for = float("inf")
        self._running = True
        now = time.time()
        proposals = self.proposals
        tracked = set(proposals.live)
        futures = proposals.observe_open_documents(now)
        futures.append(
            self.context.writer.submit(
                partial(_observe_disk, self.context.config, now), "checkpoints"
            )
        )
        gathered = asyncio.gather(*futures, return_exceptions=True)
        gathered.add_done_callback(partial(self._done, now, tracked))

    def _done(self, now: float, tracked: set[str], gathered: asyncio.Future[list[Any]]) -> None:
        self._running = False
        candidates = [now + RECHECK, self._wanted]
        self._wanted = float("inf")
        for result in gathered.result():
            if isinstance(result, BaseException):
                log.error("checkpoint evaluation failed: %s", result)
                continue
            report = result
            if isinstance(result, tuple):
                report, next_db = result
                if next_db is not None:
                    candidates.append(next_db)
            if isinstance(report, ObserveReport) and report.checkpoints:
                self.observed += report.checkpoints
                self.settled += len(report.settled)
                log.info(
                    "observed %d checkpoint(s), %d proposal(s) settled",
                    report.checkpoints,
                    len(report.settled),
                )
        self.proposals.checkpoints_observed(now, tracked)
        in_memory = self.proposals.next_due()
        if in_memory is not None:
            candidates.append(in_memory)
        # Something due at once again (recorded meanwhile) waits a moment, not a busy loop.
        self.schedule(max(min(candidates), now + 0.02))


def _observe_disk(config: Config, now: float, store: Store) -> tuple[ObserveReport, float | None]:
    report = observe_due(store, config, now=now)
    return report, store.next_due_at()
