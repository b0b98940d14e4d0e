"""Recording what one hook payload says: the shell between an agent's `Reading` and the store.

Edits are read and placed before the write transaction (`capture.hooks.edit_records`); the raw
payload is appended to the event log in the same transaction as every domain write it causes,
so the log and the tables never disagree. Afterwards the due checkpoints of the workspace are
evaluated against the disk, so outcomes are measured while no editor is open.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from capture.config import Config
from capture.edits.hunks import LocatedHunk
from capture.files import relative_to_workspace
from capture.hooks.agents.facts import (
    Call,
    Command,
    Edit,
    Prompt,
    Reading,
    Resolved,
    SessionStart,
    Stage,
    TurnEnd,
)
from capture.hooks.edit_records import SOURCE, Prepared, add_edit, follow_to_disk, prepare_edit
from capture.hooks.roots import candidate_roots, real, root_containing
from capture.hooks.sessions import (
    add_pending,
    adopt_turn,
    current_episode,
    drop_pending,
    end_open_episodes,
    episode_key,
    remember_session,
    session_model,
    take_pending,
)
from capture.hooks.snapshot import Snapshot
from capture.model import State, TestRunInput
from capture.store.database import BUSY_TIMEOUT_MS, Store

__all__ = [
    "IngestReport",
    "candidate_roots",
    "drain",
    "ingest",
    "queued",
    "retry_set_aside",
    "root_containing",
    "set_aside",
]


class IngestReport:
    """What one hook call recorded (ids), and the problems to log. Plain class: see
    capture.hooks.agents.facts."""

    __slots__ = ("proposals", "rejected", "pending", "test_runs", "problems", "checkpoints", "root")

    def __init__(self, problems: list[str]) -> None:
        self.proposals: list[str] = []
        self.rejected: list[str] = []
        self.pending: list[str] = []
        self.test_runs: list[str] = []
        self.problems = problems
        self.checkpoints = 0
        self.root: str | None = None


def _proposal_exists(store: Store, key: str) -> bool:
    row = store.conn.execute("SELECT 1 FROM proposals WHERE dedupe_key = ?", (key,)).fetchone()
    return row is not None


#: The longest duration a hook may report for one command (a week): beyond it, or not a finite
#: number, it is no duration, as its start (`now` less it) would be no time a date can show.
MAX_DURATION_S = 7 * 86400.0


def _duration(command: Command, problems: list[str]) -> float | None:
    value = command.duration_s
    if value is None or (math.isfinite(value) and 0 <= value <= MAX_DURATION_S):
        return value
    problems.append(f"duration of {value!r} s is outside 0..{MAX_DURATION_S:g} s: ignored")
    return None


def _test_run(
    config: Config,
    call: Call,
    command: Command,
    roots: list[str],
    now: float,
    problems: list[str],
) -> TestRunInput | None:
    from capture.testruns.identity import shell_runner

    # `capture run pytest` too: the wrapper's run is then the one this call enriches
    runner = shell_runner(command.command, config.test_commands)
    if runner is None:
        return None
    from capture.testruns.summaries import parse_summary

    counts = parse_summary(command.output) if command.output else None
    given = command.cwd or call.cwd
    cwd = real(given) if given else None
    root = (root_containing(cwd, roots) if cwd else None) or (roots[0] if roots else None)
    duration = _duration(command, problems)
    started = now - duration if duration else now
    return TestRunInput(
        command=command.command,
        source=SOURCE,
        started_at=started,
        workspace=root,
        name=runner if command.failure is None else f"{runner} ({command.failure})",
        cwd=cwd,
        duration_s=duration,
        exit_code=command.exit_code,
        passed=counts.passed if counts else None,
        failed=counts.failed if counts else None,
        errors=counts.errors if counts else None,
        skipped=counts.skipped if counts else None,
        failing_ids=list(counts.failing_ids) if counts else [],
        dedupe_key=command.key,
    )


def _add_test_run(
    store: Store, run: TestRunInput, now: float, *, announced: bool = False
) -> str | None:
    """The run this shell call's report is (None for a pre-tool-use report: nothing ran yet)."""
    from capture.hooks.sessions import (
        remember_shell_run,
        remember_shell_start,
        shell_run,
        take_shell_start,
    )

    key = run.dedupe_key or ""
    if announced:
        remember_shell_start(store, key, now)
        return None
    existing = store.conn.execute(
        "SELECT id, exit_code, seen_by FROM test_runs WHERE dedupe_key = ?", (key,)
    ).fetchone()
    if existing is None and (known := shell_run(store, key)) is not None:
        # merged into a run that carries the other source's key
        existing = store.conn.execute(
            "SELECT id, exit_code, seen_by FROM test_runs WHERE id = ?", (known,)
        ).fetchone()
    if existing is not None:
        # a second report of one run (Cursor's afterShellExecution and postToolUse) may know
        # the exit code the first did not
        if run.exit_code is not None:
            store.conn.execute(
                """UPDATE test_runs SET exit_code = coalesce(exit_code, ?),
                   shell_exit_code = CASE WHEN seen_by IS NULL THEN shell_exit_code
                   ELSE coalesce(shell_exit_code, ?) END WHERE id = ?""",
                (run.exit_code, run.exit_code, existing[0]),
            )
        return str(existing[0])
    began = take_shell_start(store, key)
    if run.duration_s is None and began is not None and began <= now:
        # no duration reported: the call's window opens at its pre-tool-use report
        run.started_at, run.duration_s = began, round(now - began, 6)
    run_id = store.add_test_run(run, now=now)
    remember_shell_run(store, key, run_id, now)
    return run_id


def _reject_pending(
    store: Store, config: Config, call: Call, workspace_id: int | None, report: IngestReport
) -> None:
    for announced_at, proposal in take_pending(store, call.agent, call.session_id, workspace_id):
        relative = relative_to_workspace(Path(proposal.path), Path(proposal.workspace))
        if relative is None or (
            proposal.dedupe_key and _proposal_exists(store, proposal.dedupe_key)
        ):
            continue
        proposal.state = State.REJECTED
        proposal.decided_by = "denied"
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in proposal.hunks]
        report.rejected.append(
            store.add_proposal(
                proposal,
                located,
                relative_path=relative,
                now=announced_at,
                windows=config.windows,
                late=config.late,
                gap=config.episode_gap,
            )
        )


def ingest(
    store: Store,
    config: Config,
    reading: Reading,
    raw: str,
    *,
    now: float,
    fallback_cwd: str | None = None,
    snapshots: Mapping[str, Snapshot] | None = None,
    observed_at: float | None = None,
) -> IngestReport:
    """Record one hook call. Problems are returned (for the log), never raised; store errors
    propagate to the caller, which logs them.

    `now` is the hook's moment; `snapshots` the files its payload named, as they were then
    (None: the call is being applied at its moment, so the disk is read). `observed_at`: when
    the disk is read afterwards (default `now`), to follow the edits there and to evaluate the
    checkpoints due by then."""
    call = reading.call
    report = IngestReport(problems=list(reading.problems))
    roots = candidate_roots(call, fallback_cwd)
    root = roots[0] if roots else None
    if call.cwd and roots:
        root = root_containing(real(call.cwd), roots) or root
    report.root = root
    model = call.model
    if model is None and call.session_id:
        model = session_model(store, call.agent, call.session_id)

    prepared: list[Prepared] = []
    for fact in reading.facts:
        if isinstance(fact, Edit):
            ready = prepare_edit(
                store, call, fact, roots, model, report.problems, now=now, snapshots=snapshots
            )
            if ready is not None:
                prepared.append(ready)
    runs = [
        run
        for fact in reading.facts
        if isinstance(fact, Command)
        for run in [_test_run(config, call, fact, roots, now, report.problems)]
        if run is not None
    ]

    by_edit = {id(p.edit): p for p in prepared}
    with store.transaction():
        store.append_event("hook", raw, at=now, source=f"{SOURCE}:{call.agent}", workspace=root)
        workspace_id = store.ensure_workspace(root, now) if root else None
        if workspace_id is not None and call.turn_id:
            adopt_turn(
                store,
                workspace_id=workspace_id,
                agent=call.agent,
                session_id=call.session_id,
                turn_id=call.turn_id,
                now=now,
            )
        for fact in reading.facts:
            if isinstance(fact, Edit):
                ready = by_edit.get(id(fact))
                if ready is None:
                    if fact.stage is not Stage.PROPOSED:
                        drop_pending(store, fact.key)  # it ran: never a denial
                    continue
                if fact.stage is Stage.PROPOSED:
                    if not _proposal_exists(store, fact.key):
                        ws = store.ensure_workspace(ready.proposal.workspace, now)
                        add_pending(
                            store,
                            fact.key,
                            ready.proposal,
                            ws,
                            ready.relative,
                            now,
                            pre_image=ready.proposal.file_text,
                        )
                        report.pending.append(fact.key)
                    continue
                drop_pending(store, fact.key)
                proposal_id = add_edit(store, config, ready, now)
                target = report.proposals if fact.stage is Stage.APPLIED else report.rejected
                target.append(proposal_id)
            elif isinstance(fact, Resolved):
                drop_pending(store, fact.key)
            elif isinstance(fact, Prompt) and workspace_id is not None:
                if call.turn_id is None:
                    end_open_episodes(
                        store,
                        workspace_id=workspace_id,
                        agent=call.agent,
                        session_id=call.session_id,
                        now=now,
                    )
                store.ensure_episode(
                    workspace_id=workspace_id,
                    agent=call.agent,
                    now=now,
                    gap=config.episode_gap,
                    session_id=call.session_id,
                    turn_id=call.turn_id,
                    model=model,
                    prompt=fact.text,
                    source=SOURCE,
                )
            elif isinstance(fact, TurnEnd):
                _reject_pending(store, config, call, workspace_id, report)
                _end_turn(store, call, workspace_id, fact, now)
            elif isinstance(fact, SessionStart) and call.session_id:
                remember_session(store, call.agent, call.session_id, call.model, fact.source, now)
        for run in runs:
            announced = any(
                isinstance(f, Command) and f.announced and f.key == run.dedupe_key
                for f in reading.facts
            )
            run_id = _add_test_run(store, run, now, announced=announced)
            if run_id is None:
                continue
            report.test_runs.append(run_id)
            if workspace_id is not None:
                # run inside the agent's turn: it belongs to that turn's episode whatever the
                # clock says about its start
                episode = current_episode(
                    store,
                    workspace_id=workspace_id,
                    agent=call.agent,
                    session_id=call.session_id,
                    turn_id=call.turn_id,
                    since=now - config.episode_gap,
                )
                if episode is not None:
                    store.conn.execute(
                        """INSERT OR IGNORE INTO episode_test_runs (episode_id, test_run_id)
                           VALUES (?, ?)""",
                        (episode, run_id),
                    )

    observed_at = now if observed_at is None else observed_at
    follow_to_disk(store, prepared, observed_at)
    touched = {p.proposal.workspace for p in prepared} | {r.workspace for r in runs}
    touched.discard(None)
    if root:
        touched.add(root)
    for workspace in sorted(w for w in touched if w):
        report.checkpoints += observe_workspace(store, config, workspace, observed_at)
    return report


def _end_turn(
    store: Store, call: Call, workspace_id: int | None, fact: TurnEnd, now: float
) -> None:
    if call.turn_id and not fact.session:
        key = episode_key(call.agent, call.session_id, call.turn_id)
        store.conn.execute(
            "UPDATE episodes SET ended_at = coalesce(ended_at, ?) WHERE key = ?", (now, key)
        )
        return
    if fact.session and call.session_id:
        store.conn.execute(
            """UPDATE episodes SET ended_at = ? WHERE agent = ? AND session_id = ?
               AND ended_at IS NULL""",
            (now, call.agent, call.session_id),
        )
        return
    if workspace_id is not None:
        end_open_episodes(
            store, workspace_id=workspace_id, agent=call.agent, session_id=call.session_id, now=now
        )


def observe_workspace(store: Store, config: Config, root: str, now: float) -> int:
    """Evaluate the workspace's due checkpoints against the disk; the observer (and what it
    imports) is loaded only when something is due."""
    if not store.due_checkpoints(now, workspace_root=root):
        return 0
    from capture.recording.observer import observe_due

    return observe_due(store, config, now=now, workspace_root=root).checkpoints


def _snapshots_of(store: Store, inbox_id: int) -> dict[str, Snapshot]:
    rows = store.conn.execute(
        "SELECT path, content, size, problem FROM hook_snapshots WHERE inbox_id = ?",
        (inbox_id,),
    ).fetchall()
    return {
        row[0]: Snapshot(row[0], None if row[1] is None else bytes(row[1]), row[2], row[3])
        for row in rows
    }


#: How long applying a payload waits for another writer before it is left queued.
DRAIN_BUSY_MS = 5_000


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
        store.conn.execute(f"PRAGMA busy_timeout={DRAIN_BUSY_MS}")
        try:
            return _drain_locked(store, config, clock)
        finally:
            store.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def _drain_locked(store: Store, config: Config, clock: Callable[[], float]) -> int:
    from capture.hooks.log import log_line
    from capture.testruns.sources.handoff import contention

    applied = 0
    while True:
        rows = store.conn.execute(
            "SELECT id, at, agent, event, payload, cwd, env FROM hook_inbox "
            "WHERE set_aside_at IS NULL ORDER BY id LIMIT 64"
        ).fetchall()
        if not rows:
            return applied
        for row in rows:
            agent, event = row["agent"], row["event"]
            problems: list[str] = []
            try:
                # One transaction for the whole of it, taking it off the queue included: a
                # payload that fails half-way leaves nothing behind, so applying it again
                # (`capture doctor --retry`) records its event and its rows once.
                store.conn.execute("BEGIN IMMEDIATE")
                _apply_row(store, config, row, problems, clock)
                store.conn.execute("DELETE FROM hook_inbox WHERE id = ?", (row["id"],))
                store.conn.execute("DELETE FROM hook_snapshots WHERE inbox_id = ?", (row["id"],))
                store.conn.execute("COMMIT")
            except Exception as exc:  # noqa: BLE001 - set aside or left queued, never lost
                _end_transaction(store)
                if contention(exc):
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
        reading = read_payload(agent, payload, decode_env(row["env"]), event)
        report = ingest(
            store,
            config,
            reading,
            text,
            now=row["at"],
            fallback_cwd=row["cwd"],
            snapshots=_snapshots_of(store, row["id"]),
            observed_at=max(clock(), row["at"]),
        )
        problems.extend(report.problems)


def _left_queued(inbox_id: int, exc: BaseException) -> str:
    return f"queue: payload {inbox_id} left for the next drain: {type(exc).__name__}: {exc}"


def _end_transaction(store: Store) -> None:
    """Roll back what a failed apply left open, so the next row starts clean."""
    if store.conn.in_transaction:
        with contextlib.suppress(Exception):  # nothing left to undo
            store.conn.execute("ROLLBACK")


def _set_aside(store: Store, inbox_id: int, error: str, now: float) -> None:
    # the error may quote the payload's own undecodable text: stored escaped
    text = error.encode("utf-8", "backslashreplace").decode("utf-8")
    with store.transaction():
        store.conn.execute(
            "UPDATE hook_inbox SET set_aside_at = ?, error = ?, attempts = attempts + 1 "
            "WHERE id = ?",
            (now, text, inbox_id),
        )


def set_aside(store: Store) -> list[dict[str, Any]]:
    """The payloads set aside, oldest first: id, when queued and set aside, agent, event,
    attempts, error."""
    rows = store.conn.execute(
        "SELECT id, at, set_aside_at, agent, event, attempts, error FROM hook_inbox "
        "WHERE set_aside_at IS NOT NULL ORDER BY id"
    ).fetchall()
    return [dict(row) for row in rows]


def retry_set_aside(store: Store, config: Config, *, clock: Callable[[], float] = time.time) -> int:
    """Put the set-aside payloads back in the queue and drain it; returns how many of them
    were applied (the rest are set aside again, their attempts counted)."""
    with store.transaction():
        ids = [
            r[0]
            for r in store.conn.execute(
                "SELECT id FROM hook_inbox WHERE set_aside_at IS NOT NULL"
            ).fetchall()
        ]
        store.conn.execute(
            "UPDATE hook_inbox SET set_aside_at = NULL WHERE set_aside_at IS NOT NULL"
        )
    drain(store, config, clock=clock)
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    left = store.conn.execute(
        f"SELECT count(*) FROM hook_inbox WHERE id IN ({marks})", ids
    ).fetchone()[0]
    return len(ids) - int(left)


def queued(store: Store) -> int:
    """Payloads waiting in the fast lane's queue, set-aside ones not counted (0 on a store
    without the queue)."""
    try:
        return int(
            store.conn.execute(
                "SELECT count(*) FROM hook_inbox WHERE set_aside_at IS NULL"
            ).fetchone()[0]
        )
    except Exception:  # noqa: BLE001 - an older store has no queue
        return 0
