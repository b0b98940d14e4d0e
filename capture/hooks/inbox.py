"""The hook's fast lane.

An agent waits for every hook call, so `capture hook` only queues the payload as received (one
INSERT), answers the agent if its protocol asks, and returns. A detached child then applies the
queue in order (parsing, proposals, checkpoints) under a lock; any reader of the store drains
what is left first, so nothing queued is ever invisible for long. Imports here are `os`, `sys`,
`time`, the DB-API module (through `capture.connection`), `capture.dirs` and the queue's rows
(`capture.store.inbox_rows`, which holds the INSERT) only: each one is paid on every agent tool
call. `capture run` queues the runs it has nothing to read for here
too (`capture.testruns.sources.handoff`).
"""

from __future__ import annotations

import os
import sys
import time

from capture.connection import sqlite3
from capture.dirs import capture_dirs
from capture.store.inbox_rows import queue_payload

# Not `from typing import ...`: the hook's fast lane pays for every import it makes.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from capture.hooks.snapshot import Snapshot

__all__ = [
    "INBOX_ENV",
    "db_path",
    "decode_env",
    "detach",
    "enqueue",
    "queue_env",
]

#: Environment variables agents set for their hooks that the payload readers consult: kept with
#: the payload, because the queue may be applied by another process.
INBOX_ENV = (
    "CLAUDE_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "CODEX_PROJECT_DIR",
    "COPILOT_PROJECT_DIR",
    # not an agent's: set by `capture import hooks` on the payloads it replays
    "CAPTURE_HOOK_REPLAY",
)


def db_path(env: dict[str, str] | os._Environ[str]) -> str:
    return os.path.join(capture_dirs(env)[0], "capture.db")


def _encode_env(env: dict[str, str] | os._Environ[str]) -> str:
    return "\x1f".join(f"{k}={env[k]}" for k in INBOX_ENV if env.get(k))


def decode_env(text: str | None) -> dict[str, str]:
    pairs = (item.split("=", 1) for item in (text or "").split("\x1f") if "=" in item)
    return {k: v for k, v in pairs}


def enqueue(
    path: str,
    agent: str,
    event: str | None,
    raw: bytes,
    cwd: str,
    env: str,
    *,
    snapshots: Sequence[Snapshot] = (),
    at: float | None = None,
    timeout: float = 10.0,
) -> bool:
    """Queue one payload, with the files it names as they are now (one transaction). False
    when the store is not ready for it (first run: the schema is created on the slow path),
    cannot be written, or the cwd or environment cannot be stored as text. `at`: when the hook
    fired (default: now). With the disk full, the payload goes to the spool allocated for that
    (`capture.hooks.spool`; True when it is kept there), and the next drain queues it."""
    if not os.path.exists(path):
        return False
    when = time.time() if at is None else at
    try:
        queue_payload(
            path,
            when,
            agent,
            event,
            raw,
            cwd,
            env,
            [(s.path, s.content, s.size, s.problem) for s in snapshots if _storable(s.path)],
            timeout=timeout,
        )
    except sqlite3.Error as exc:
        from capture.hooks import spool

        data_dir = os.path.dirname(path)
        if spool.disk_full(exc, data_dir):
            return spool.keep(data_dir, (when, agent, event, raw, cwd, env))
        return False
    except UnicodeEncodeError:
        # UnicodeEncodeError: a cwd or an agent's variable holding bytes UTF-8 cannot (a
        # surrogate escape from the OS) has no TEXT form: the hook reads it in its own process
        return False
    return True


def _storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the applier reads the payload's own path
        return False
    return True


def detach(work: object) -> bool:
    """Run `work()` in a child the agent does not wait for. False where fork is unavailable
    (the caller then does the work itself)."""
    if not hasattr(os, "fork"):
        return False
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
        pid = os.fork()
    except (OSError, ValueError):
        return False
    if pid:
        return True
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        work()  # type: ignore[operator]
    finally:
        os._exit(0)
    return True  # pragma: no cover - the child never gets here


def queue_env() -> str:
    return _encode_env(os.environ)
