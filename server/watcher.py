"""Files with live proposals that no editor holds open, followed on disk.

Only the directories of those files are watched, each without recursion: a blind recursive
watch of a workspace runs out of inotify watches on a node_modules-sized tree. Events for other
files in a watched directory are dropped in the observer's thread; the rest are debounced per
file on the loop (an editor's save or a formatter's rewrite is several events), then the
writer thread reads the file and carries its regions to the new text.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.uris import to_fs_path
from watchdog.events import (
    FileClosedNoWriteEvent,
    FileOpenedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from capture.files import read_text
from capture.recording.observer import observe_file
from capture.store.database import Store
from server.documents import Documents
from server.feature import Context, Feature, NotificationHandler
from server.params import ParamsError
from server.proposals import Proposals

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver, ObservedWatch

__all__ = ["DiskWatcher"]

log = logging.getLogger(__name__)

DEBOUNCE = 0.2
_IGNORED = (FileOpenedEvent, FileClosedNoWriteEvent)


class _Filter(FileSystemEventHandler):
    """Runs in the observer's thread: passes on only events naming a followed file."""

    def __init__(self, files: set[str], hit: Callable[[str], None]) -> None:
        self._files = files
        self._hit = hit

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or isinstance(event, _IGNORED):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            if path and path in self._files:
                self._hit(path)


class DiskWatcher(Feature):
    def __init__(
        self,
        context: Context,
        documents: Documents,
        proposals: Proposals,
        debounce: float = DEBOUNCE,
    ) -> None:
        super().__init__(context)
        self.documents = documents
        self.proposals = proposals
        self._debounce = debounce
        self._files: set[str] = set()
        self._counts: dict[str, int] = {}
        self._dirs: dict[str, ObservedWatch] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._observer: BaseObserver | None = None
        self.events = 0
        self.reads = 0

    def notifications(self) -> dict[str, NotificationHandler]:
        return {"workspace/didChangeWatchedFiles": self.on_watched_files}

    def diagnostics(self) -> dict[str, Any]:
        return {"diskEvents": self.events, "diskReads": self.reads}

    def file_followed(self, file: str) -> None:
        self.watch(file)

    def file_unfollowed(self, file: str) -> None:
        self.unwatch(file)

    @property
    def directories(self) -> list[str]:
        return sorted(self._dirs)

    def watch(self, file: str) -> None:
        count = self._counts.get(file, 0)
        self._counts[file] = count + 1
        if count:
            return
        self._files.add(file)
        directory = os.path.dirname(file)
        if directory in self._dirs:
            return
        try:
            observer = self._ensure_observer()
            self._dirs[directory] = observer.schedule(
                _Filter(self._files, self._from_thread), directory, recursive=False
            )
        except (OSError, RuntimeError) as exc:
            # A missing directory or no watches left: checkpoints still read the file on time.
            log.warning("cannot watch %s: %s", directory, exc)

    def unwatch(self, file: str) -> None:
        count = self._counts.get(file, 0) - 1
        if count > 0:
            self._counts[file] = count
            return
        self._counts.pop(file, None)
        self._files.discard(file)
        directory = os.path.dirname(file)
        if any(os.path.dirname(f) == directory for f in self._files):
            return
        watch = self._dirs.pop(directory, None)
        if watch is not None and self._observer is not None:
            try:
                self._observer.unschedule(watch)
            except (KeyError, OSError) as exc:
                log.debug("unschedule %s: %s", directory, exc)

    async def stop(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None

    def _ensure_observer(self) -> BaseObserver:
        if self._observer is None:
            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        return self._observer

    def _from_thread(self, path: str) -> None:
        loop = self.context.loop
        if not loop.is_closed():
            loop.call_soon_threadsafe(self._hit, path)

    @property
    def settling(self) -> bool:
        """A followed file changed and has not been quiet for the debounce delay yet."""
        return bool(self._timers)

    def on_watched_files(self, params: Any, raw: bytes) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("changes"), list):
            raise ParamsError("changes must be a list")
        for change in params["changes"]:
            uri = change.get("uri") if isinstance(change, dict) else None
            if isinstance(uri, str) and uri.startswith("file:"):
                path = to_fs_path(uri)
                if path and path in self.proposals.by_file:
                    self.changed(path)

    def changed(self, path: str) -> None:
        """The client says ``path`` changed on disk (``workspace/didChangeWatchedFiles``)."""
        if path in self._files:
            self._hit(path)

    def _hit(self, path: str) -> None:
        self.events += 1
        timer = self._timers.pop(path, None)
        if timer is not None:
            timer.cancel()
        self._timers[path] = self.context.loop.call_later(self._debounce, self._changed, path)

    def _changed(self, path: str) -> None:
        self._timers.pop(path, None)
        if path not in self._files or path in self.documents.by_file:
            return  # no longer followed, or the editor's buffer is the truth for it
        places = {
            (p.workspace_id, p.path)
            for p in self.proposals.by_file.get(path, {}).values()
            # recorded, so both are known: only recorded proposals are followed on disk
            if p.workspace_id is not None and p.path is not None
        }
        if not places:
            return
        self.reads += 1
        self.context.writer.post(
            partial(_read_and_follow, path, sorted(places), time.time()), "disk change"
        )


def _read_and_follow(file: str, places: list[tuple[int, str]], now: float, store: Store) -> Any:
    text = read_text(Path(file))
    if text is None:
        return None  # gone or unreadable: the checkpoint will say lost, or find it back
    for workspace_id, path in places:
        observe_file(store, workspace_id, path, text, (), now=now, via="disk")
    return None
