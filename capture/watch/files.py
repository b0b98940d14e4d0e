"""The watches: one per folder holding a pending file (never a repository whole), through
watchdog; where the system refuses a watch (inotify's limit), that folder's pending files are
polled instead, said once in the log."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

__all__ = ["Watches"]

Notify = Callable[[str], None]

#: The watchdog events that may change a file's text ("closed": closed after writing). An open
#: or a close without writing never does, and reacting to one would read the file again, which
#: opens it again.
CHANGES = frozenset({"modified", "created", "deleted", "moved", "closed"})


def _observer() -> Any:
    from watchdog.observers import Observer

    observer = Observer()
    observer.daemon = True
    observer.start()
    return observer


class _Handler:
    """watchdog's handler protocol: every event of a watched folder, filtered to the files."""

    def __init__(self, watches: Watches) -> None:
        self._watches = watches

    def dispatch(self, event: Any) -> None:
        if getattr(event, "event_type", None) not in CHANGES:
            return  # opened, closed without writing: our own reads among them
        for path in (getattr(event, "src_path", None), getattr(event, "dest_path", None)):
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            if path and path in self._watches.files:
                self._watches.notify(path)


class Watches:
    """The folders watched for a set of files; `notify(path)` is called (on watchdog's thread)
    when one of the files may have changed."""

    def __init__(
        self,
        notify: Notify,
        log: Callable[[str], None],
        observer_factory: Callable[[], Any] = _observer,
    ) -> None:
        self.notify = notify
        self._log = log
        self._factory = observer_factory
        self._observer: Any = None
        self._handler = _Handler(self)
        self._watched: dict[str, Any] = {}
        self._polled: set[str] = set()
        self._stats: dict[str, tuple[int, int] | None] = {}
        self.files: frozenset[str] = frozenset()

    @property
    def folders(self) -> list[str]:
        return sorted(self._watched)

    @property
    def polled_folders(self) -> list[str]:
        return sorted(self._polled)

    def follow(self, files: frozenset[str]) -> None:
        """Watch the folders of `files` and no other."""
        self.files = files
        folders = {os.path.dirname(f) for f in files}
        for folder in sorted(set(self._watched) - folders):
            with contextlib.suppress(KeyError, OSError, ValueError):
                self._observer.unschedule(self._watched.pop(folder))
        self._polled &= folders
        for folder in sorted(folders - set(self._watched) - self._polled):
            self._schedule(folder)
        self._stats = {f: self._stats.get(f, _stat(f)) for f in files if self._is_polled(f)}

    def _is_polled(self, path: str) -> bool:
        return os.path.dirname(path) in self._polled

    def _schedule(self, folder: str) -> None:
        if not os.path.isdir(folder):
            self._polled.add(folder)  # a folder still to be created: its files are polled
            return
        try:
            if self._observer is None:
                self._observer = self._factory()
            self._watched[folder] = self._observer.schedule(self._handler, folder, recursive=False)
        except OSError as exc:
            if not self._polled:
                self._log(
                    f"the system refused a watch on {folder} ({exc.strerror or exc}): "
                    "polling the pending files of such folders instead (raise "
                    "fs.inotify.max_user_watches to watch them)"
                )
            self._polled.add(folder)

    def poll(self) -> None:
        """Notify the polled files whose size or time changed since the last poll."""
        for path, before in list(self._stats.items()):
            now = _stat(path)
            if now != before:
                self._stats[path] = now
                self.notify(path)

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
