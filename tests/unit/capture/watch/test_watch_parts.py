"""The watcher's parts: the lock, the hook's hints, and polling where the system refuses a
watch."""

from __future__ import annotations

import errno
from pathlib import Path

from capture.watch.files import Watches
from capture.watch.hints import leave_hint, take_hints
from capture.watch.lock import hold, running


def test_one_holder_of_the_lock(tmp_path: Path) -> None:
    assert not running(tmp_path)
    held = hold(tmp_path)
    assert held is not None
    assert running(tmp_path)
    assert hold(tmp_path) is None  # a second watcher gives way
    held.close()
    assert not running(tmp_path)


def test_hints_are_taken_once(tmp_path: Path) -> None:
    leave_hint(tmp_path, ["/ws/a.py", "/ws/b.py"])
    leave_hint(tmp_path, ["/ws/c.py"])
    assert take_hints(tmp_path) == ["/ws/a.py", "/ws/b.py", "/ws/c.py"]
    assert take_hints(tmp_path) == []


class RefusingObserver:
    def schedule(self, handler: object, folder: str, recursive: bool = False) -> object:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    def stop(self) -> None: ...

    def join(self, timeout: float | None = None) -> None: ...


def test_refused_watches_fall_back_to_polling_with_one_log_line(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.py").write_text("x = 1\n")
    notified: list[str] = []
    logged: list[str] = []
    watches = Watches(notified.append, logged.append, observer_factory=RefusingObserver)
    files = frozenset(str(tmp_path / n / "f.py") for n in ("a", "b"))
    watches.follow(files)
    assert watches.folders == []
    assert watches.polled_folders == sorted(str(tmp_path / n) for n in ("a", "b"))
    assert len(logged) == 1 and "polling" in logged[0] and "max_user_watches" in logged[0]
    watches.poll()
    assert notified == []
    (tmp_path / "a" / "f.py").write_text("x = 22\n")
    watches.poll()
    assert notified == [str(tmp_path / "a" / "f.py")]


def test_only_the_pending_files_folders_are_watched(tmp_path: Path) -> None:
    scheduled: list[str] = []

    class Recording(RefusingObserver):
        def schedule(self, handler: object, folder: str, recursive: bool = False) -> object:
            assert not recursive
            scheduled.append(folder)
            return folder

        def unschedule(self, watch: object) -> None:
            scheduled.remove(str(watch))

    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    watches = Watches(lambda _: None, lambda _: None, observer_factory=Recording)
    watches.follow(frozenset({str(tmp_path / "a" / "x.py"), str(tmp_path / "a" / "y.py")}))
    assert scheduled == [str(tmp_path / "a")]
    watches.follow(frozenset({str(tmp_path / "b" / "x.py")}))
    assert scheduled == [str(tmp_path / "b")]
