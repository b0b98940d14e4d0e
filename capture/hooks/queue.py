"""Applying the queue the fast lane fills (`capture.hooks.inbox`): each payload, oldest first,
through `capture.hooks.ingest`, with the files it named as they were when the hook fired; the
runs `capture run` queued through `capture.testruns.sources.wrapper`. A payload whose applying
fails is set aside with its error, never lost; `capture doctor` lists and retries those.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from capture.config import Config
from capture.hooks import spool
from capture.hooks.ingest import REPLAY_ENV, ingest
from capture.hooks.snapshot import Snapshot
from capture.hooks.spool import SpooledPayload, disk_full
from capture.store import inbox_rows
from capture.store.database import BUSY_TIMEOUT_MS, Store

__all__ = ["drain", "queued", "retry_set_aside", "set_aside"]

#: How long applying a payload waits for another writer before it is left queued.
DRAIN_BUSY_MS = 5_000
#: Payloads read from the queue at a time.
PAGE = 64
#: How many times a payload set aside for a passing fault is put back by itself.
TRANSIENT_ATTEMPTS = 20


def _snapshots_of(store: Store, inbox_id: int) -> dict[str, Snapshot]:
    return {row[0]: Snapshot(*row) for row in inbox_rows.snapshot_rows(store.conn, inbox_id)}


def drain(store: Store, config: Config, *, clock: Callable[[], float] = time.time) -> int:
    """Apply the hook payloads queued by the fast lane, and the runs `capture run` queued,
    oldest first; returns how many were taken off the queue.

    A lock file makes one process at a time do it, so payloads of one agent turn are applied in
    the order the agent sent them. A payload must never block the ones behind it, and must
    never be lost: one whose applying fails is set aside with its error (`capture doctor` lists
    it, `capture doctor --retry` applies it again). Another writer holding the database is no
    fault of the payload: after a bounded busy wait (`DRAIN_BUSY_MS`) the row stays queued as it
    is and draining stops, for the next drain to pick up.
    """
    import fcntl

    lock_path = store.path.with_name(store.path.name + ".hooks.lock")
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # a bounded wait for other writers: past it the queue is left for the next drain,
        # rather than holding a reader (or the applier) for the store's full busy timeout
        store.set_busy_timeout(DRAIN_BUSY_MS)
        try:
            _take_spool(store, config)
            _retry_transient(store)
            return _drain_locked(store, config, clock)
        finally:
            store.set_busy_timeout(BUSY_TIMEOUT_MS)


def _drain_locked(store: Store, config: Config, clock: Callable[[], float]) -> int:
    from capture.hooks.log import log_line
    from capture.testruns.sources.handoff import contention

    applied = 0
    while True:
        rows = inbox_rows.queued_rows(store.conn, PAGE)
        if not rows:
            return applied
        for row in rows:
            agent, event = row["agent"], row["event"]
            problems: list[str] = []
            try:
                # One transaction for the whole of it, taking it off the queue included: a
                # payload that fails half-way leaves nothing behind, so applying it again
                # (`capture doctor --retry`) records its event and its rows once.
                store.begin()
                _apply_row(store, config, row, problems, clock)
                inbox_rows.take_off_queue(store.conn, row["id"])
                store.commit()
            except Exception as exc:  # noqa: BLE001 - set aside or left queued, never lost
                _end_transaction(store)
                if contention(exc) or disk_full(exc, str(store.path.parent)):
                    # no fault of the payload: the next drain applies it, nobody has to
                    log_line(config.paths.log_dir, agent, event, _left_queued(row["id"], exc))
                    return applied
                error = f"{type(exc).__name__}: {exc}"
                log_line(
                    config.paths.log_dir,
                    agent,
                    event,
                    f"queue: payload {row['id']} set aside: {error}",
                )
                try:
                    _set_aside(store, row["id"], error, clock())
                except Exception as again:  # noqa: BLE001 - it stays queued, as it was
                    _end_transaction(store)
                    log_line(config.paths.log_dir, agent, event, _left_queued(row["id"], again))
                    return applied
                continue
            for problem in problems:
                log_line(config.paths.log_dir, agent, event, problem)
            applied += 1


def _take_spool(store: Store, config: Config) -> None:
    """Queue what hooks kept in the spool while the disk was full, then make sure the spool
    is allocated for next time (both need room: without it they wait for the next drain)."""
    data_dir = str(store.path.parent)

    def put(records: list[SpooledPayload]) -> None:
        with store.transaction():
            for at, agent, event, payload, cwd, env in records:
                inbox_rows.insert_payload(store.conn, at, agent, event, payload, cwd, env)

    try:
        moved = spool.replay(data_dir, put)
        if moved:
            from capture.hooks.log import log_line

            log_line(config.paths.log_dir, "-", None, f"queue: {moved} payload(s) from the spool")
        spool.ensure(data_dir)
    except Exception:  # noqa: BLE001 - the spool stays as it is, for the next drain
        _end_transaction(store)


def _retry_transient(store: Store) -> None:
    """Payloads set aside for a passing fault (a full disk, a locked database) go back in the
    queue by themselves, a few times at most."""
    try:
        if not inbox_rows.any_transient(store.conn, max_attempts=TRANSIENT_ATTEMPTS):
            return  # the usual case: no write lock taken
        with store.transaction():
            inbox_rows.requeue_transient(store.conn, max_attempts=TRANSIENT_ATTEMPTS)
    except Exception:  # noqa: BLE001 - they stay set aside, for the next drain
        _end_transaction(store)


def _apply_row(
    store: Store, config: Config, row: Any, problems: list[str], clock: Callable[[], float]
) -> None:
    """Apply one queued payload; what it holds that cannot be used goes to `problems`, what
    fails raises."""
    from capture.hooks.agents import AGENTS, read_payload
    from capture.hooks.inbox import decode_env
    from capture.hooks.payloads import parse_payload
    from capture.testruns.sources.handoff import RUN_AGENT

    agent, event = row["agent"], row["event"]
    raw = bytes(row["payload"])
    if agent == RUN_AGENT:
        from capture.testruns.sources.wrapper import apply_queued_run

        apply_queued_run(store, config, raw)
    elif agent not in AGENTS:
        problems.append(f"unknown agent {agent!r}")
    elif (found := parse_payload(raw, len(raw), problems)) is not None:
        payload, text = found
        env = decode_env(row["env"])
        reading = read_payload(agent, payload, env, event)
        report = ingest(
            store,
            config,
            reading,
            text,
            now=row["at"],
            fallback_cwd=row["cwd"],
            snapshots=_snapshots_of(store, row["id"]),
            observed_at=max(clock(), row["at"]),
            replayed=env.get(REPLAY_ENV) == "1",
        )
        problems.extend(report.problems)


def _left_queued(inbox_id: int, exc: BaseException) -> str:
    return f"queue: payload {inbox_id} left for the next drain: {type(exc).__name__}: {exc}"


def _end_transaction(store: Store) -> None:
    """Roll back what a failed apply left open, so the next row starts clean."""
    if store.in_transaction:
        with contextlib.suppress(Exception):  # nothing left to undo
            store.rollback()


def _set_aside(store: Store, inbox_id: int, error: str, now: float) -> None:
    # the error may quote the payload's own undecodable text: stored escaped
    text = error.encode("utf-8", "backslashreplace").decode("utf-8")
    with store.transaction():
        inbox_rows.set_aside_row(store.conn, inbox_id, text, now)


def set_aside(store: Store) -> list[dict[str, Any]]:
    """The payloads set aside, oldest first: id, when queued and set aside, agent, event,
    attempts, error."""
    return inbox_rows.set_aside_rows(store.conn)


def retry_set_aside(store: Store, config: Config, *, clock: Callable[[], float] = time.time) -> int:
    """Put the set-aside payloads back in the queue and drain it; returns how many of them
    were applied (the rest are set aside again, their attempts counted)."""
    with store.transaction():
        ids = inbox_rows.requeue_set_aside(store.conn)
    drain(store, config, clock=clock)
    if not ids:
        return 0
    return len(ids) - inbox_rows.left_in_queue(store.conn, ids)


def queued(store: Store) -> int:
    """Payloads waiting in the fast lane's queue, set-aside ones not counted (0 on a store
    without the queue)."""
    try:
        return inbox_rows.queued_count(store.conn)
    except Exception:  # noqa: BLE001 - an older store has no queue
        return 0
