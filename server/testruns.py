"""``capture/testRun``: an editor's test runner reports a run."""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Any

from pygls.uris import to_fs_path

from capture.config import Config
from capture.model import TestRunInput
from capture.moments import checked, checked_duration
from capture.recording.recorder import Recorder
from capture.store.database import Store
from server.feature import Feature, NotificationHandler
from server.params import ParamsError, parse_test_run
from server.workspaces import inside, resolve, workspace_root

__all__ = ["TestRuns"]

log = logging.getLogger(__name__)


class TestRuns(Feature):
    def notifications(self) -> dict[str, NotificationHandler]:
        return {"capture/testRun": self.on_test_run}

    def on_test_run(self, params: Any, raw: bytes) -> None:
        p = parse_test_run(params)
        now = time.time()
        workspace = p.workspace
        if workspace is not None and workspace.startswith("file:"):
            workspace = to_fs_path(workspace) or None
            if workspace is None:
                raise ParamsError("workspace is not a usable file: URI")
        folders = list(self.context.folders)
        if not self.context.allow_outside:
            # A run names its place; one outside the editor's folders would make up a workspace.
            if p.cwd is not None and not inside(p.cwd, folders):
                raise ParamsError(f"cwd {p.cwd[:200]!r} is outside the workspace folders")
            if workspace is not None and not _near(workspace, folders):
                raise ParamsError(f"workspace {workspace[:200]!r} is not a workspace folder")
        duration = checked_duration(p.duration_s, what="capture/testRun durationS")
        started = p.started_at
        if started is None:
            started = now - (duration or 0.0)
        # a time outside 2000 .. a day from now is the time received (logged), never stored
        started = checked(started, wall=now, what="capture/testRun startedAt")
        run = TestRunInput(
            command=p.command,
            source="editor",
            started_at=started,
            workspace=workspace,
            name=p.name,
            cwd=p.cwd,
            duration_s=duration,
            exit_code=p.exit_code,
            passed=p.passed,
            failed=p.failed,
            errors=p.errors,
            skipped=p.skipped,
            failing_ids=list(p.failing_ids),
            dedupe_key=f"lsp:{p.run_id}" if p.run_id else None,
        )
        self.context.writer.post(
            partial(
                _record, self.context.config, run, folders, now, raw.decode("utf-8", "replace")
            ),
            "capture/testRun",
        )


def _near(workspace: str, folders: list[str]) -> bool:
    """A workspace is a folder, lies in one, or holds one (a git root above the folder)."""
    return inside(workspace, folders) or any(inside(f, [workspace]) for f in folders)


def _record(
    config: Config, run: TestRunInput, folders: list[str], now: float, raw: str, store: Store
) -> str:
    if run.workspace is not None:
        run.workspace = resolve(run.workspace)
    elif run.cwd is not None:
        run.workspace = workspace_root(resolve(run.cwd), folders)
    elif folders:
        run.workspace = workspace_root(resolve(folders[0]), folders)
    run_id = Recorder(store, config).test_run(run, now=now, raw=raw)
    log.info("recorded test run %s (%s, exit %s)", run_id, run.command, run.exit_code)
    return run_id
