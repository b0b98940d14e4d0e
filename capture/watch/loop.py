"""The watcher's loop: follow the pending files, record each change as it happens, evaluate
each checkpoint at its due time, run the late pass when a known HEAD moves (and at a low rate),
and exit once nothing has been pending for `Config.watcher_idle`."""

from __future__ import annotations

import os
import queue
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capture.config import Config
from capture.edits.history import Coverage
from capture.files import read_text
from capture.recording.coverage import WatcherStatus, write_status
from capture.recording.observer import observe_due
from capture.recording.recorder import Recorder
from capture.store.change_rows import known_roots, pending_files
from capture.store.database import Store
from capture.watch.files import Watches
from capture.watch.heads import HeadMarks
from capture.watch.hints import take_hints
from capture.watch.ownership import held_by_editor

__all__ = ["LOG_NAME", "TICK", "Watcher", "log_line"]

LOG_NAME = "watcher.log"
#: The longest the loop sleeps: how soon it sees a new pending file and a moved HEAD.
TICK = 0.5
#: The status file's sign of life, and the store's pending files, at most this often.
REFRESH = 1.0
#: A changed file is read once it has been quiet this long.
QUIET = 0.05
#: A hinted file not pending after this long is no longer followed.
HINT_LIFE = 60.0
#: A watcher started for an edit still being applied waits this long for it to be pending
#: before its idle time counts.
STARTUP_GRACE = 10.0
#: The late pass runs for the known workspaces at least this often, HEAD moving or not.
LATE_EVERY = 900.0
#: Workspaces the late pass follows: those with a proposal within this many seconds.
KNOWN_FOR = 30 * 86400.0


def log_line(log_dir: Path, message: str) -> None:
    """One line in watcher.log (never raises: the log loses only itself)."""
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        now = time.time()
        stamp = (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
        )
        with (log_dir / LOG_NAME).open("a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"{stamp} [{os.getpid()}] {' '.join(message.split())}\n")
    except Exception:  # noqa: BLE001
        pass


class Watcher:
    def __init__(
        self,
        store: Store,
        config: Config,
        *,
        clock: Callable[[], float] = time.time,
        observer_factory: Callable[[], Any] | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.recorder = Recorder(store, config)
        self.clock = clock
        self.changed: queue.Queue[tuple[str, float]] = queue.Queue()
        kwargs = {} if observer_factory is None else {"observer_factory": observer_factory}
        self.watches = Watches(self._notify, self.log, **kwargs)
        self.started_at = clock()
        self.status = WatcherStatus(os.getpid(), self.started_at, self.started_at)
        self.heads = HeadMarks()
        #: file (absolute path) -> (workspace root, relative path), for the pending files
        self.tracked: dict[str, tuple[str, str]] = {}
        #: files an edit being recorded names (a hook's hint), not pending yet: what they held
        #: and when, recorded once their workspace is known; dropped after HINT_LIFE
        self.hinted: dict[str, list[tuple[float, bool, str | None]]] = {}
        self.last_text: dict[str, tuple[bool, str | None]] = {}
        #: files that changed, and when they last did (read once quiet for QUIET)
        self.dirty: dict[str, float] = {}
        self.next_due: float | None = None
        self.idle_since: float | None = None
        self.stopping = False
        self._version = -1
        self._refreshed = 0.0
        self._late_at = self.started_at
        self._heads_at = 0.0
        self._settled = False
        self._seen_pending = False

    def log(self, message: str) -> None:
        log_line(self.config.paths.log_dir, message)

    def _notify(self, path: str) -> None:
        self.changed.put((path, self.clock()))

    # -- the loop --------------------------------------------------------------------------

    def run(self) -> int:
        self.log(f"started (exits after {self.config.watcher_idle:g} s with nothing pending)")
        self._write_status()
        try:
            while not self.stopping:
                now = self.clock()
                self.step(now)
                idle = self.idle_since is not None and now - self.idle_since
                if idle is not False and idle >= self.config.watcher_idle:
                    self.log("nothing pending: exiting")
                    break
                self._wait()
        finally:
            self.watches.stop()
            self.status.stopped_at = self.status.alive_at = self.clock()
            self._write_status()
        return 0

    def _wait(self) -> None:
        timeout = QUIET if self.dirty else TICK
        if self.next_due is not None:
            timeout = max(0.0, min(timeout, self.next_due - self.clock()))
        try:
            item = self.changed.get(timeout=timeout)
        except queue.Empty:
            return
        self.changed.put(item)  # taken again by step(), with the others

    def step(self, now: float) -> None:
        """One turn: hints taken, pending files refreshed, changes recorded, due checkpoints
        evaluated, the late pass where HEAD moved, the status written."""
        hints = take_hints(self.config.paths.state_dir)
        if hints:
            self._hint(hints, now)
        if hints or now - self._refreshed >= REFRESH or self._version != self.store.data_version():
            self._refresh(now)
        self.watches.poll()
        self._record_changes(force=False)
        if self.next_due is not None and self.next_due <= self.clock():
            self._evaluate()
        self._late(now)
        if now - self.status.alive_at >= REFRESH:
            self._write_status()

    def _hint(self, paths: list[str], now: float) -> None:
        self.log(f"hinted: {len(paths)} file(s) being edited")
        for file in paths:
            if file not in self.tracked and file not in self.hinted:
                self.hinted[file] = []
                self._record(file, now)

    def _refresh(self, now: float) -> None:
        if not self.config.paths.db.exists():
            self.log("the database is gone: exiting")
            self.stopping = True
            return
        self._version = self.store.data_version()
        self._refreshed = now
        files: dict[str, tuple[str, str]] = {}
        next_due = None
        for root, path, due_at in pending_files(self.store.conn):
            if held_by_editor(self.store, root, path, now=now):
                continue
            files[os.path.join(root, path)] = (root, path)
            next_due = due_at if next_due is None else min(next_due, due_at)
        self.next_due = next_due
        if files:
            self.idle_since = None
            self._seen_pending = True
        elif self.idle_since is None and (
            self._seen_pending or now - self.started_at >= STARTUP_GRACE
        ):
            self.idle_since = now
        new = [f for f in files if f not in self.tracked]
        self.tracked = files
        for file, seen in list(self.hinted.items()):
            if file in files:
                del self.hinted[file]
                for at, exists, text in seen:
                    self._write(file, at, exists, text)
            elif not seen or now - seen[0][0] >= HINT_LIFE:
                del self.hinted[file]
        for gone in set(self.last_text) - set(files) - set(self.hinted):
            del self.last_text[gone]
        self.watches.follow(frozenset(files) | frozenset(self.hinted))
        for file in new:
            self._record(file, now)  # the text found: where the watcher's knowledge starts
        self.status.folders = self.watches.folders
        self.status.mode = "polling" if self.watches.polled_folders else "events"
        self.status.files = len(files)

    def _record_changes(self, *, force: bool) -> None:
        while True:
            try:
                path, at = self.changed.get_nowait()
            except queue.Empty:
                break
            if path in self.tracked or path in self.hinted:
                self.dirty[path] = max(at, self.dirty.get(path, at))
        now = self.clock()
        for path, at in list(self.dirty.items()):
            # a file being written is read once quiet: a read in the middle of a write (git
            # truncates, then writes) would record a text the file held for a moment only
            if force or now - at >= QUIET:
                del self.dirty[path]
                self._record(path, at)

    def _record(self, file: str, at: float) -> None:
        text = read_text(Path(file))
        exists = text is not None or os.path.lexists(file)
        if file in self.hinted:
            if not self.hinted[file] or self.hinted[file][-1][1:] != (exists, text):
                self.hinted[file].append((at, exists, text))
            return
        if file in self.tracked:
            self._write(file, at, exists, text)

    def _write(self, file: str, at: float, exists: bool, text: str | None) -> None:
        state = (exists, text)
        if self.last_text.get(file) == state:
            return
        self.last_text[file] = state
        root, path = self.tracked[file]
        # unreadable (binary, too large) is recorded as no text: the region cannot be read
        self.recorder.file_change(root, path, text, at=at)

    def _evaluate(self) -> None:
        self._record_changes(force=True)  # what happened up to now is recorded before it is judged
        now = self.clock()
        report = observe_due(
            self.store, self.config, now=now, coverage=Coverage(self.started_at, now)
        )
        if report.settled:
            self._settled = True
        self._refresh(now)

    def _late(self, now: float) -> None:
        if now - self._heads_at < REFRESH and not self._settled:
            return
        self._heads_at = now
        roots = known_roots(self.store.conn, now - KNOWN_FOR)
        moved = self.heads.moved(roots)
        due = now - self._late_at >= LATE_EVERY
        if not (moved or due or self._settled):
            return
        self._settled = False
        self._late_at = now
        # imported when first needed: the watcher's start is on the clock of an edit's first
        # checkpoint, the late pass is not
        from capture.recording.late_git import late_pass
        from capture.recording.late_tiers import episodes_of, recompute_tiers

        for root in moved or roots:
            try:
                late = late_pass(self.store, now=now, under=root)
                if late.measured:
                    recompute_tiers(self.store, episodes_of(self.store, late.measured), now=now)
            except Exception as exc:  # noqa: BLE001 - one repository's trouble stops no other
                self.log(f"late pass in {root}: {type(exc).__name__}: {exc}")

    def _write_status(self) -> None:
        if self.status.stopped_at is None:
            self.status.alive_at = self.clock()
        try:
            write_status(self.config.paths.state_dir, self.status)
        except OSError as exc:
            self.log(f"status file: {exc}")

    def stop(self, *_: object) -> None:
        self.stopping = True


def install_signals(watcher: Watcher) -> None:
    signal.signal(signal.SIGTERM, watcher.stop)
    signal.signal(signal.SIGINT, watcher.stop)
