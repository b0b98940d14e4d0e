"""JUnit reports that appear in the editor's workspaces are recorded as test runs.

An IDE's test runner, `mvn test` or `go test | go-junit-report` in a terminal, leave a report
and no other trace: while an editor is open, its workspaces' report paths are watched (the
watcher of `capture junit --watch`, one per workspace root, each on a thread of its own), so
those runs are linked to the agent's edits without a wrapper. Two editors on one workspace
record a report once: runs from report files are deduplicated by file, time and size.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from capture.files import find_workspace
from capture.testruns.junit_files import DEFAULT_REPORT_GLOBS
from capture.testruns.sources.junit_watcher import ReportWatcher
from server.feature import Context, Feature

__all__ = ["ReportWatching", "workspace_roots"]

log = logging.getLogger(__name__)


def workspace_roots(folders: list[str]) -> list[Path]:
    """One root per workspace: the git work tree around each folder, else the folder."""
    roots = [find_workspace(Path(f), Path(f)).resolve() for f in folders if Path(f).is_dir()]
    return list(dict.fromkeys(roots))


class ReportWatching(Feature):
    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.watchers: list[ReportWatcher] = []
        self._threads: list[threading.Thread] = []

    def diagnostics(self) -> dict[str, Any]:
        return {"reportWatchers": len(self.watchers)}

    def initialized(self) -> None:
        config = self.context.config
        if not config.watch_reports:
            return
        globs = config.junit_reports or DEFAULT_REPORT_GLOBS
        for root in workspace_roots(self.context.folders):
            watcher = ReportWatcher(root, config, globs, log=log.info)
            try:
                watcher.start()
            except OSError as exc:  # out of inotify watches, a root gone meanwhile
                log.warning("not watching %s for JUnit reports: %s", root, exc)
                continue
            thread = threading.Thread(
                target=watcher.run_forever, name=f"reports:{root.name}", daemon=True
            )
            thread.start()
            self.watchers.append(watcher)
            self._threads.append(thread)
            log.info("watching %s for JUnit reports (%s)", root, ", ".join(globs))

    async def stop(self) -> None:
        for watcher in self.watchers:
            watcher.stop()
        for thread in self._threads:
            thread.join(timeout=5)
