"""The pytest plugin: records every pytest session, with each test's outcome, as a test run.

Active wherever agent-capture is installed (entry point `pytest11` named `agent_capture`); off
with `-p no:agent_capture`, or `-p no:capture` (which also turns off pytest's own output
capturing). Importing it costs next to nothing: the store is opened once, at the end of the
session, and written in one transaction. Under `capture run`, the session's results are handed
to the wrapper instead, which records the run once, with its real exit code. Nothing that goes
wrong here fails or changes the user's session: it becomes one warning line.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any

__all__ = ["pytest_configure"]

_RESULTS_ENV = "CAPTURE_RUN_RESULTS"
# One outcome per test: the worst of its phases.
_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


class _Recorder:
    def __init__(self, config: Any) -> None:
        self.config = config
        self.started_at = time.time()
        self.t0 = time.monotonic()
        self.outcomes: dict[str, str] = {}
        self.durations: dict[str, float] = {}
        self.marker: Any = None

    def pytest_sessionstart(self, session: Any) -> None:
        self.started_at = time.time()
        self.t0 = time.monotonic()
        if getattr(self.config.option, "xmlpath", None) and not os.environ.get(_RESULTS_ENV):
            # A JUnit watcher would record the report too: tell it this session will.
            with contextlib.suppress(Exception):
                self.marker = _mark(str(self.config.rootpath))

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.outcomes[report.nodeid or "<collection>"] = "error"

    def pytest_runtest_logreport(self, report: Any) -> None:
        when = report.when
        if when == "call":
            outcome = report.outcome
            self.durations[report.nodeid] = report.duration
        elif report.failed:
            outcome = "error"
        elif report.skipped:
            outcome = "skipped"
        elif when == "setup":
            outcome = "passed"  # a placeholder until the call phase says more
        else:
            return
        if outcome not in _RANK:  # a plugin's own outcome (e.g. "rerun"): not final
            return
        nodeid = report.nodeid
        previous = self.outcomes.get(nodeid)
        if previous is None or _RANK[outcome] > _RANK[previous]:
            self.outcomes[nodeid] = outcome

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        try:
            self._finish(int(exitstatus))
        except Exception as exc:  # noqa: BLE001 - never fail the user's session
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(
                    f"\ncapture: warning: this test session was not recorded: "
                    f"{type(exc).__name__}: {exc}\n"
                )
        finally:
            if self.marker is not None:
                from capture.testruns.sources.in_progress import unmark

                unmark(self.marker)

    def _finish(self, exit_code: int) -> None:
        from pathlib import Path

        from capture.files import find_workspace
        from capture.model import CaseResult
        from capture.testruns.results import PluginSession, encode_session

        config = self.config
        rootpath = str(config.rootpath)
        results_file = os.environ.get(_RESULTS_ENV)
        workspace = str(find_workspace(Path(rootpath), Path(rootpath)))
        base = os.path.relpath(rootpath, workspace)
        session = PluginSession(exit_code=exit_code)
        for nodeid, outcome in self.outcomes.items():
            file = nodeid.split("::", 1)[0] if nodeid else None
            if file and base != ".":
                file = os.path.normpath(os.path.join(base, file))
            duration = self.durations.get(nodeid)
            session.cases.append(CaseResult(nodeid, outcome, file, None, duration))
            if outcome == "passed":
                session.passed += 1
            elif outcome == "failed":
                session.failed += 1
            elif outcome == "error":
                session.errors += 1
            else:
                session.skipped += 1
        if results_file:
            with open(results_file, "a", encoding="utf-8") as fh:
                fh.write(encode_session(session) + "\n")
            return
        self._record(session, workspace)

    def _record(self, session: Any, workspace: str) -> None:
        import shlex

        from capture.config import load_config
        from capture.model import TestRunInput
        from capture.recording.recorder import Recorder
        from capture.store.database import Store

        config = self.config
        duration = time.monotonic() - self.t0
        run = TestRunInput(
            command=shlex.join(["pytest", *config.invocation_params.args]),
            source="pytest-plugin",
            started_at=self.started_at,
            workspace=workspace,
            cwd=str(config.invocation_params.dir),
            duration_s=round(duration, 6),
            exit_code=session.exit_code,
            passed=session.passed,
            failed=session.failed,
            errors=session.errors,
            skipped=session.skipped,
            failing_ids=[c.test_id for c in session.cases if c.outcome in ("failed", "error")],
            runner="pytest",
            results_from="plugin",
            cases=session.cases,
        )
        settings = load_config()
        with Store.open(settings.paths.db) as store:
            Recorder(store, settings).test_run(
                run, now=self.started_at + duration, late_seconds=settings.late.seconds
            )


def _mark(rootpath: str) -> Any:
    from pathlib import Path

    from capture.files import find_workspace
    from capture.paths import resolve_paths
    from capture.testruns.sources.in_progress import mark_running

    workspace = find_workspace(Path(rootpath), Path(rootpath))
    return mark_running(resolve_paths().state_dir, str(workspace))


def pytest_configure(config: Any) -> None:
    if config.pluginmanager.is_blocked("capture"):  # -p no:capture
        return
    if hasattr(config, "workerinput"):  # an xdist worker: the controller sees every report
        return
    config.pluginmanager.register(_Recorder(config), "agent_capture_recorder")
