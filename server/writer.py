"""The one thread that writes the server's records: the event loop never waits on SQLite.

Handlers put *jobs* (functions of a :class:`~capture.store.database.Store`) and raw event rows on a
queue. The thread takes whatever is queued, up to a limit, and runs it in one transaction:
events in arrival order, each job inside a savepoint so that one bad job is rolled back alone.
Results reach the loop only after the commit, so the loop never acts on uncommitted data.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

from capture.connection import sqlite3
from capture.errors import CaptureError
from capture.store.database import Store
from server.params import ParamsError

__all__ = ["EventRow", "Job", "StoreWriter"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Job = Callable[[Store], T]
EventRow = tuple[float, str, str | None, str | None, str]  # at, kind, source, workspace, payload

#: Queued writes past which keystroke events are dropped (a stuck disk must not eat memory).
MAX_BEHIND = 50_000

#: The writer's page cache, in KiB. A server runs all day in every editor window, and the
#: library's default cache (2 MB) fills as the store grows; the writer appends rows and looks up
#: by key, pages the OS keeps cached anyway (measured: no slower commits, 1.5 KB less per live
#: proposal at 1,000 in `bench_proposal_commit.py`).
WRITER_CACHE_KIB = 512


class _Stop:
    pass


_STOP = _Stop()


class _JobItem:
    __slots__ = ("job", "future", "label")

    def __init__(self, job: Job[Any], future: asyncio.Future[Any] | None, label: str) -> None:
        self.job = job
        self.future = future
        self.label = label


class StoreWriter:
    """A background thread owning the server's write connection."""

    def __init__(self, db_path: Path, *, batch_limit: int = 1000) -> None:
        self._db_path = db_path
        self._batch_limit = batch_limit
        self._queue: SimpleQueue[_JobItem | tuple[Any, ...] | _Stop] = SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="capture-writer", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opened = threading.Event()
        self.open_error: BaseException | None = None
        self.queued = 0  # items put minus items done: how far the thread lags behind
        self.committed_batches = 0
        self.failed_jobs = 0
        self.dropped_events = 0

    # ---------------------------------------------------------------- loop side

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread.start()

    def submit(self, job: Job[T], label: str = "job") -> asyncio.Future[T]:
        """Queue ``job``; the future resolves (on the loop) after its transaction committed."""
        assert self._loop is not None, "writer not started"
        future: asyncio.Future[T] = self._loop.create_future()
        self.queued += 1
        self._queue.put(_JobItem(job, future, label))
        return future

    def post(self, job: Job[Any], label: str = "job") -> None:
        """Queue ``job`` without waiting for it; a failure is logged."""
        self.queued += 1
        self._queue.put(_JobItem(job, None, label))

    def event(self, row: EventRow, *, droppable: bool = False) -> None:
        """Append a raw event row (batched with whatever else is queued). A droppable one
        (a keystroke) is dropped while the thread is far behind, rather than held in memory."""
        if droppable and self.queued > MAX_BEHIND:
            self.dropped_events += 1
            if self.dropped_events % 10_000 == 1:
                log.warning("the store is %d writes behind: keystroke events dropped", self.queued)
            return
        self.queued += 1
        self._queue.put(row)

    def flush(self) -> asyncio.Future[None]:
        """Resolves once everything queued before it is committed."""
        return self.submit(_noop, "flush")

    def stop(self, timeout: float = 10.0) -> None:
        """Commit what is queued, then end the thread (called once the loop has stopped)."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # ---------------------------------------------------------------- thread side

    def _run(self) -> None:
        try:
            store = Store.open(self._db_path, cache_kib=WRITER_CACHE_KIB)
        except BaseException as exc:  # noqa: BLE001 - reported to every job from now on
            log.error("cannot open the store: %s", exc)
            self.open_error = exc
            store = None
        self._opened.set()
        while not self._next_batch(store):
            pass
        if store is not None:
            store.close()

    def _next_batch(self, store: Store | None) -> bool:
        """Wait for, and write, one batch; True once told to stop. Its own frame, so that
        nothing of a batch (its jobs, their texts, their results) outlives it while the thread
        waits for the next: an idle server holds no copy of the last thousand jobs."""
        batch = [self._queue.get()]
        while len(batch) < self._batch_limit:
            try:
                batch.append(self._queue.get_nowait())
            except Empty:
                break
        stop = any(item is _STOP for item in batch)
        items = [item for item in batch if item is not _STOP]
        if items:
            self._process(store, items, attempts=3)
        return stop

    def _process(self, store: Store | None, items: list[Any], attempts: int) -> None:
        results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        started = time.perf_counter()
        if store is None:
            error = self.open_error or RuntimeError("store unavailable")
            results = [
                (i.future, None, error) for i in items if isinstance(i, _JobItem) and i.future
            ]
            self._deliver(results, len(items))
            return
        try:
            store.begin()
            rows: list[EventRow] = []
            for item in items:
                if not isinstance(item, _JobItem):
                    rows.append(item)
                    continue
                if rows:
                    store.append_events(rows)  # inside the batch's transaction
                    rows = []
                results.append(self._run_job(store, item))
            if rows:
                store.append_events(rows)
            store.commit()
            self.committed_batches += 1
        except BaseException as exc:  # noqa: BLE001 - the whole batch failed: say so to each job
            if store.in_transaction:
                try:
                    store.rollback()
                except Exception:  # noqa: BLE001
                    log.exception("rollback failed")
            if isinstance(exc, sqlite3.OperationalError) and attempts > 1:
                # Another process held the write lock past the busy timeout: try again.
                log.warning("write transaction failed (%s); retrying", exc)
                self._process(store, items, attempts - 1)
                return
            log.error("write transaction failed (%d items): %s", len(items), exc)
            done = {id(r[0]) for r in results}
            results = [(f, None, exc) for f, _, _ in results]
            results += [
                (i.future, None, exc)
                for i in items
                if isinstance(i, _JobItem) and i.future and id(i.future) not in done
            ]
        elapsed = time.perf_counter() - started
        if elapsed > 1.0:
            log.warning("write batch of %d items took %.1f s", len(items), elapsed)
        self._deliver([r for r in results if r[0] is not None], len(items))

    def _run_job(
        self, store: Store, item: _JobItem
    ) -> tuple[asyncio.Future[Any], Any, BaseException | None]:
        store.open_savepoint("job")
        try:
            result = item.job(store)
        except Exception as exc:  # noqa: BLE001 - one job's failure must not undo the others
            store.rollback_to("job")
            if isinstance(exc, ParamsError):
                # the client's mistake (a decision for an id never reported): nothing failed here
                log.warning("%s", exc)
                return item.future, None, exc  # type: ignore[return-value]
            self.failed_jobs += 1
            if isinstance(exc, CaptureError):
                log.warning("%s: %s", item.label, exc)
            else:
                log.error("%s failed", item.label, exc_info=exc)
            return item.future, None, exc  # type: ignore[return-value]
        store.release("job")
        return item.future, result, None  # type: ignore[return-value]

    def _deliver(
        self, results: list[tuple[asyncio.Future[Any], Any, BaseException | None]], count: int
    ) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            loop.call_soon_threadsafe(_resolve, self, results, count)


def _noop(store: Store) -> None:
    return None


def _resolve(
    writer: StoreWriter,
    results: list[tuple[asyncio.Future[Any], Any, BaseException | None]],
    count: int,
) -> None:
    writer.queued -= count
    for future, result, error in results:
        if future.done():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
