"""Runs of `capture run` as test runs: built from how the command ended and the best results
at hand, recorded by the wrapper itself, or later from the queue
(`capture.testruns.sources.handoff`)."""

from __future__ import annotations

import json
import shlex
from typing import Any

from capture.config import Config
from capture.model import TestRunInput
from capture.recording.recorder import record_test_run
from capture.store.database import Store
from capture.testruns.results import Results, choose_results, fill_run

__all__ = ["apply_queued_run", "record_wrapped", "wrapped_run"]

SOURCE = "wrapper"


def wrapped_run(
    argv: list[str],
    *,
    cwd: str,
    workspace: str,
    name: str | None,
    started_at: float,
    duration_s: float,
    exit_code: int,
) -> TestRunInput:
    return TestRunInput(
        command=shlex.join(argv),
        source=SOURCE,
        started_at=started_at,
        workspace=workspace,
        name=name,
        cwd=cwd,
        duration_s=round(duration_s, 6),
        exit_code=exit_code,
    )


def record_wrapped(store: Store, config: Config, run: TestRunInput, results: Results) -> str:
    fill_run(run, results)
    return record_test_run(
        store,
        run,
        now=run.started_at + (run.duration_s or 0.0),
        late_seconds=config.late.seconds,
    )


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"a queued run has no valid {name!r}")
    return value


def apply_queued_run(store: Store, config: Config, raw: bytes) -> str:
    """Record a run the wrapper queued, its results read from the runner's summary (the
    wrapper queues only runs with no plugin results and no JUnit report). ValueError when
    the payload is not one of ours."""
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("a queued run is not a JSON object")
    argv = _field(data, "argv", list)
    if not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("a queued run's argv is not a list of strings")
    name = data.get("name")
    run = wrapped_run(
        argv,
        cwd=_field(data, "cwd", str),
        workspace=_field(data, "workspace", str),
        name=name if isinstance(name, str) else None,
        started_at=float(_field(data, "started_at", (int, float))),
        duration_s=float(_field(data, "duration_s", (int, float))),
        exit_code=_field(data, "exit_code", int),
    )
    run.dedupe_key = _field(data, "key", str)
    output = _field(data, "output", str)
    summary = None
    if output.strip():
        from capture.testruns.summaries import parse_summary

        summary = parse_summary(output)
    results = choose_results(summary=summary)
    return record_wrapped(store, config, run, results)
