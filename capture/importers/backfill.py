"""Recording an agent's past sessions from its transcript files: the shell around the
transcript readers, `prepare` and `write`.

Worker processes read and judge the transcripts while the main process writes them, several
to a transaction; files already imported and unchanged since are skipped without being read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from capture.config import Config
from capture.importers.git_history import GitHistory
from capture.importers.prepare import Caches, Prepared, prepare
from capture.importers.records import History
from capture.importers.write import ImportStats, write
from capture.store.database import DeferredRollups, Store
from capture.store.import_rows import imported_files, mark_imported

__all__ = ["Reader", "import_files"]

Reader = Callable[[Iterable[str]], History]


#: worker processes judge transcripts while the main process writes; below this many files,
#: starting them costs more than it saves
PARALLEL_FROM = 16
BATCH_SECONDS = 0.5
#: the page cache of the writing connection while it imports (SQLite's own default: 2 MB)
CACHE_KIB = 64 * 1024

_worker: tuple[Reader, Caches, tuple[str, ...]] | None = None


def _init_worker(reader: Reader, patterns: tuple[str, ...]) -> None:
    global _worker
    _worker = (reader, Caches(GitHistory()), patterns)


def _read_and_prepare(path: str) -> Prepared | None:
    assert _worker is not None
    reader, caches, patterns = _worker
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            history = reader(fh)
    except OSError:
        return None
    prepared = prepare(history, caches, patterns)
    # what goes back to the writing process: the transcript's own text is not needed there
    history.edits, history.runs = [], []
    return prepared


def import_files(
    store: Store,
    config: Config,
    importer: str,
    reader: Reader,
    files: Iterable[Path],
    *,
    now: float,
    advance: Callable[[], None] = lambda: None,
    workers: int | None = None,
) -> ImportStats:
    """Import transcripts; those imported before and unchanged since are skipped unread."""
    stats = ImportStats()
    seen = imported_files(store.conn, importer)
    todo: list[tuple[str, int, int]] = []
    for file in files:
        try:
            info = file.stat()
        except OSError:
            stats.bad += 1
            advance()
            continue
        name = str(file.resolve())
        if seen.get(name) == (info.st_size, info.st_mtime_ns):
            stats.skipped += 1
            advance()
            continue
        todo.append((name, info.st_size, info.st_mtime_ns))
    count = workers if workers is not None else min(os.cpu_count() or 1, 4)
    results: Iterable[Prepared | None]
    pool = None
    if count > 1 and len(todo) >= PARALLEL_FROM:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pool = ProcessPoolExecutor(
            count, context, initializer=_init_worker, initargs=(reader, config.test_commands)
        )
        # chunks as large as keeps every worker busy: each one costs the writing process a
        # round of its result thread
        chunk = max(1, min(16, len(todo) // (4 * count)))
        results = pool.map(_read_and_prepare, [name for name, _, _ in todo], chunksize=chunk)
    else:
        _init_worker(reader, config.test_commands)
        results = (_read_and_prepare(name) for name, _, _ in todo)
    batch = _Batch(store)
    # a backfill inserts all over the tables' indexes: with SQLite's default 2 MB of cache
    # most of those pages would be read again for every row
    cache = store.cache_size()
    store.set_cache_size(-CACHE_KIB)
    try:
        for (name, size, mtime_ns), prepared in zip(todo, results, strict=True):
            if prepared is None:
                stats.bad += 1
            else:
                _write_one(
                    store, config, importer, prepared, name, size, mtime_ns, now, stats, batch
                )
            advance()
    finally:
        batch.close()
        store.set_cache_size(cache)
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return stats


class _Batch:
    """One write transaction over several transcripts (committed every BATCH_SECONDS): a
    commit per small file would cost more than the file. The rollups of the proposals it
    inserts are added once at its end (the writes of a batch only insert proposals and
    checkpoints, never update them)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.opened = 0.0
        self.deferred: DeferredRollups | None = None

    def enter(self) -> None:
        import time

        if self.store.in_transaction and time.monotonic() - self.opened > BATCH_SECONDS:
            self.close()
        if not self.store.in_transaction:
            self.store.begin()
            self.opened = time.monotonic()
            try:
                self.deferred = self.store.defer_rollups()
            except BaseException:
                self.store.rollback()  # never commit half the triggers dropped
                raise

    def close(self) -> None:
        deferred, self.deferred = self.deferred, None
        if not self.store.in_transaction:
            return  # rolled back by SQLite: the triggers are back with the rest
        try:
            if deferred is not None:
                self.store.catch_up_rollups(deferred)
        except BaseException:
            self.store.rollback()
            raise
        self.store.commit()


def _write_one(
    store: Store,
    config: Config,
    importer: str,
    prepared: Prepared,
    name: str,
    size: int,
    mtime_ns: int,
    now: float,
    stats: ImportStats,
    batch: _Batch,
) -> None:
    stats.bad += prepared.history.bad_lines
    before = stats.proposals
    batch.enter()
    # a savepoint per file: one that fails leaves the others of the batch recorded
    with store.savepoint("transcript"):
        write(store, config, prepared, now=now, stats=stats)
        mark_imported(
            store.conn,
            importer,
            name,
            size=size,
            mtime_ns=mtime_ns,
            now=now,
            proposals=stats.proposals - before,
        )
    stats.files += 1
