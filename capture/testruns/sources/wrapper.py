"""Runs of `capture run` as test runs: built from how the command ended and the best results
at hand, recorded by the wrapper itself, or later from the queue
(`capture.testruns.sources.handoff`)."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from typing import Any

from capture.config import Config
from capture.connection import sqlite3
from capture.model import CaseResult, TestRunInput
from capture.recording.recorder import Recorder
from capture.store.database import Store
from capture.testruns.results import Results, choose_results, fill_run

__all__ = ["apply_queued_run", "record_wrapped", "wrapped_run"]

SOURCE = "wrapper"

#: How long queueing a run waits for other writers, once recording it has waited its own while.
QUEUE_BUSY_MS = 60_000


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


def record_wrapped(
    store: Store,
    config: Config,
    run: TestRunInput,
    results: Results,
    *,
    queue_when_busy: bool = True,
) -> str:
    """Record the run; returns its id. When other writers hold the store past its busy wait,
    the run is queued for the next drain instead (`queue_when_busy`), and the key it was queued
    under is returned: a run that ended is never dropped for contention."""
    fill_run(run, results)
    try:
        return _record(store, config, run)
    except sqlite3.OperationalError as exc:
        from capture.testruns.sources.handoff import contention

        if not (queue_when_busy and contention(exc)):
            raise
        return _queue_recorded(store, run)


def _record(store: Store, config: Config, run: TestRunInput) -> str:
    return Recorder(store, config).test_run(
        run, now=run.started_at + (run.duration_s or 0.0), late_seconds=config.late.seconds
    )


def _queue_recorded(store: Store, run: TestRunInput) -> str:
    """Queue the filled run in the hooks' queue (its next drain records it); returns its key.
    The queue's one-row insert gets a fresh wait of QUEUE_BUSY_MS where the run's writes did
    not get through."""
    import time

    from capture.store.inbox_rows import insert_payload
    from capture.testruns.sources.handoff import RUN_AGENT, RUN_EVENT, encode_recorded

    if store.in_transaction:
        store.rollback()
    if run.dedupe_key is None:  # applying the queued run twice records it once
        run.dedupe_key = f"run:{os.urandom(12).hex()}"
    raw = encode_recorded(dataclasses.asdict(run))
    timeout = store.busy_timeout()
    store.set_busy_timeout(QUEUE_BUSY_MS)
    try:
        with store.transaction():
            insert_payload(store.conn, time.time(), RUN_AGENT, RUN_EVENT, raw, run.cwd or "", "")
    finally:
        store.set_busy_timeout(timeout)
    return run.dedupe_key


def _recorded_run(fields: Any) -> TestRunInput:
    if not isinstance(fields, dict):
        raise ValueError("a queued run's fields are not a JSON object")
    known = {f.name for f in dataclasses.fields(TestRunInput)}
    values = {k: v for k, v in fields.items() if k in known}
    cases = values.pop("cases", None) or []
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        raise ValueError("a queued run's cases are not a list of objects")
    try:
        run = TestRunInput(**values)
        run.cases = [CaseResult(**c) for c in cases]
    except TypeError as exc:
        raise ValueError(f"a queued run is not one of ours: {exc}") from exc
    return run


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
    if "recorded" in data:  # results read already; the store was busy when it was recorded
        return _record(store, config, _recorded_run(data["recorded"]))
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
    # contention propagates: the queue keeps the row for the next drain
    return record_wrapped(store, config, run, results, queue_when_busy=False)
