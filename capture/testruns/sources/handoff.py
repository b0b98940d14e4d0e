"""How `capture run` hands a finished run to the queue the hooks use (`capture.hooks.inbox`):
one JSON payload, written with `json` alone, read back by `capture.testruns.sources.wrapper` in
the process that drains the queue. `sqlite3` is imported only to say what contention is.

The wrapper takes this way when nothing about the run needs saying on the user's terminal (no
pytest plugin results, no JUnit report to read, so nothing to warn about): the command's exit
status then comes back without waiting for the store's heavier imports and writes. A run whose
results were read but whose write met other writers past the busy wait is queued too
(`encode_recorded`), rather than lost.
"""

from __future__ import annotations

import json
import os
from typing import Any

from capture.connection import sqlite3

__all__ = ["RUN_AGENT", "RUN_EVENT", "contention", "encode_recorded", "encode_run"]

#: The queue's `agent` column for runs of `capture run` (no agent is named so).
RUN_AGENT = "capture-run"
RUN_EVENT = "run"


def encode_run(
    *,
    argv: list[str],
    name: str | None,
    cwd: str,
    workspace: str,
    started_at: float,
    duration_s: float,
    exit_code: int,
    output: bytes,
) -> bytes:
    """The payload for one finished run; `key` makes applying it twice record it once."""
    return json.dumps(
        {
            "argv": argv,
            "name": name,
            "cwd": cwd,
            "workspace": workspace,
            "started_at": started_at,
            "duration_s": duration_s,
            "exit_code": exit_code,
            # what the runner's summary is read from, later
            "output": output.decode("utf-8", "replace"),
            "key": f"run:{os.urandom(12).hex()}",
        },
        separators=(",", ":"),
    ).encode("utf-8")


def encode_recorded(fields: dict[str, Any]) -> bytes:
    """The payload for a run whose results were read already but whose write found the store
    held by other writers: its fields as `TestRunInput` has them (cases as plain objects), so
    the process that drains the queue records it as it was, results included."""
    return json.dumps({"recorded": fields}, separators=(",", ":")).encode("utf-8")


def contention(exc: BaseException) -> bool:
    """Whether a failed write is other writers holding the database (it passes: queue it, or
    leave it queued, for later), as opposed to something wrong with what was written."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "locked" in text or "busy" in text
