"""Watching a workspace's report paths for JUnit XML files, so runs made without `capture run`
or the pytest plugin (an IDE's test runner, `mvn test`, `go test | go-junit-report`) are
recorded too. A shell: watchdog events in, `capture.testruns.junit_files` decisions, store writes
out.

Only the report directories are watched (a directory that does not exist yet is waited for
from its nearest existing parent, without recursion), never the whole workspace. Reports
written while a `capture run` or a pytest session with `--junitxml` is running in the workspace
(`capture.testruns.sources.in_progress`), or by a run already recorded by the wrapper or the plugin,
are left to that run.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from capture.config import Config
from capture.model import TestRunInput
from capture.recording.recorder import Recorder
from capture.store.database import Store
from capture.testruns.junit_files import (
    Batches,
    covered_by_run,
    glob_matches,
    read_reports,
    report_dedupe_key,
    report_dirs,
    report_started_at,
)
from capture.testruns.sources.in_progress import runs_in_progress

__all__ = ["ReportWatcher", "record_reports"]

_QUIET_S = 1.0
_TICK_S = 0.2

Log = Callable[[str], None]


def record_reports(
    store: Store,
    config: Config,
    root: Path,
    paths: Sequence[Path],
    *,
    log: Log,
    skip_covered: bool = True,
) -> str | None:
    """Record one run from report files written together; returns its id, or None when they
    held no JUnit results or belong to a run recorded by another source."""
    read = read_reports(paths)
    for warning in read.warnings:
        log(f"warning: {warning}; its results were not read")
    if read.report is None:
        return None
    stats = []
    for path in read.paths:
        st = path.stat()
        stats.append((path, st))
    written = [st.st_mtime for _, st in stats]
    if skip_covered and covered_by_run(written, _other_runs(store, str(root), min(written))):
        log(f"{_names(read.paths, root)}: already recorded with its run")
        return None
    report = read.report
    names = _names(read.paths, root)
    # One file per report: its own duration is unknown, so each file's end time and the
    # merged duration bound the start.
    started_at = report_started_at([(max(written), report.duration_s)])
    run = TestRunInput(
        command=names,
        source="junit-file",
        started_at=min(started_at, min(written)),
        workspace=str(root),
        cwd=str(root),
        duration_s=report.duration_s,
        exit_code=None,
        passed=report.passed,
        failed=report.failed,
        errors=report.errors,
        skipped=report.skipped,
        failing_ids=report.failing_ids,
        dedupe_key=report_dedupe_key([(str(p), st.st_mtime_ns, st.st_size) for p, st in stats]),
        runner=report.runner,
        results_from="junit",
        report=names,
        cases=report.cases,
    )
    run_id = Recorder(store, config).test_run(
        run, now=time.time(), late_seconds=config.late.seconds
    )
    log(
        f"recorded {names}: {report.passed} passed, {report.failed} failed, "
        f"{report.errors} errors, {report.skipped} skipped (run {run_id})"
    )
    return run_id


def _names(paths: Sequence[Path], root: Path) -> str:
    names = []
    for path in paths:
        try:
            names.append(path.relative_to(root).as_posix())
        except ValueError:
            names.append(str(path))
    return ", ".join(names)


def _other_runs(store: Store, root: str, since: float) -> list[tuple[float, float | None]]:
    # an agent's shell run is not one of them: the report's results are recorded into it
    return store.run_times_in(root, since - 86400.0, excluding=("junit-file", "hook"))


class ReportWatcher:
    """Watches one workspace's report paths and records each burst of reports as a run."""

    def __init__(
        self,
        root: Path,
        config: Config,
        globs: Sequence[str],
        *,
        log: Log,
        open_store: Callable[[], Store] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.config = config
        self.globs = list(globs)
        self.log = log
        self.open_store = open_store or (lambda: Store.open(config.paths.db))
        self.started = time.time()
        self._batches = Batches(_QUIET_S)
        self._lock = threading.Lock()
        # _arm runs on the observer's thread (a directory appeared) and on ours (one vanished)
        self._arm_lock = threading.RLock()
        self._stop = threading.Event()
        self._watched: dict[Path, Any] = {}
        self._observer: Any = None

    # -- watchdog side (its thread) ---------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        paths = [getattr(event, "dest_path", None) or event.src_path]
        if event.event_type == "moved":
            paths = [event.dest_path]
        for raw in paths:
            path = Path(os.fsdecode(raw))
            if event.is_directory:
                if event.event_type in ("created", "moved"):
                    self._arm_safely(scan_new=True)
                continue
            self._consider(path)

    def _consider(self, path: Path) -> None:
        try:
            relative = path.relative_to(self.root).as_posix()
        except ValueError:
            return
        if glob_matches(relative, self.globs):
            with self._lock:
                self._batches.add(str(path), time.monotonic())

    def _arm_safely(self, *, scan_new: bool = False) -> None:
        try:
            self._arm(scan_new=scan_new)
        except OSError as exc:  # out of inotify watches: keep what is watched already
            self.log(f"warning: cannot watch a report directory: {exc}")

    def _rearm_vanished(self) -> None:
        """Drop the watches of directories that were deleted (`mvn clean`, a test runner
        wiping its output directory), then watch again what exists, so that a directory made
        anew is seen."""
        with self._arm_lock:
            gone = [path for path in self._watched if not path.is_dir()]
            for path in gone:
                watch = self._watched.pop(path)
                # the observer may have dropped it with the directory
                with contextlib.suppress(KeyError, OSError):
                    self._observer.unschedule(watch)
        if gone:
            self._arm_safely(scan_new=True)

    def _arm(self, *, scan_new: bool = False) -> None:
        """Watch every report directory that exists; for one that does not, its nearest
        existing parent (not recursively), to notice it appear."""
        with self._arm_lock:
            self._arm_locked(scan_new)

    def _arm_locked(self, scan_new: bool) -> None:
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("created", "modified", "moved", "closed"):
                    watcher._on_event(event)

        for prefix, deep in report_dirs(self.globs).items():
            target = self.root / prefix if prefix else self.root
            if target.is_dir():
                if target not in self._watched:
                    self._watched[target] = self._observer.schedule(
                        Handler(), str(target), recursive=deep
                    )
                    if scan_new and target != self.root:
                        self._scan(target, deep)
                continue
            parent = target.parent
            while parent != self.root and not parent.is_dir():
                parent = parent.parent
            if parent not in self._watched:
                self._watched[parent] = self._observer.schedule(
                    Handler(), str(parent), recursive=False
                )

    def _scan(self, directory: Path, deep: bool) -> None:
        """Reports written in a directory before we could watch it."""
        files = directory.rglob("*.xml") if deep else directory.glob("*.xml")
        for path in files:
            try:
                if path.stat().st_mtime >= self.started:
                    self._consider(path)
            except OSError:
                continue

    # -- our side --------------------------------------------------------------------------

    def start(self) -> None:
        from watchdog.observers import Observer

        self._observer = Observer()
        self._arm()
        self._observer.start()

    def stop(self) -> None:
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)

    def run_forever(self) -> None:
        """Flush quiet batches until stop() (or KeyboardInterrupt)."""
        store: Store | None = None
        try:
            while not self._stop.wait(_TICK_S):
                self._rearm_vanished()
                with self._lock:
                    due = self._batches.due(time.monotonic())
                for batch in due:
                    if runs_in_progress(self.config.paths.state_dir, str(self.root)):
                        with self._lock:  # that run will record them: look again later
                            for path in batch:
                                self._batches.add(path, time.monotonic())
                        continue
                    try:
                        if store is None:
                            store = self.open_store()
                    except Exception as exc:  # noqa: BLE001 - a watcher keeps watching
                        self.log(f"warning: cannot open the database: {exc}")
                        continue
                    self._record(store, [Path(p) for p in batch])
        finally:
            if store is not None:
                store.close()

    def _record(self, store: Store, paths: list[Path]) -> None:
        existing = [p for p in paths if p.is_file()]
        if not existing:
            return
        try:
            record_reports(store, self.config, self.root, existing, log=self.log)
        except Exception as exc:  # noqa: BLE001 - a watcher keeps watching
            self.log(f"warning: could not record {_names(existing, self.root)}: {exc}")
