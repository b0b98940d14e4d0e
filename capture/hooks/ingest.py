"""Recording what one hook payload says: the shell between an agent's `Reading` and the
recording front door (`capture.recording.recorder.Recorder`).

Edits are read and placed before the write transaction (`capture.hooks.edit_records`); the raw
payload is appended to the event log in the same transaction as every domain write it causes,
so the log and the tables never disagree. What a call leaves for later calls (pending edits,
shell runs, session starts) is kept in `capture.store.hook_rows`. Afterwards the due checkpoints
of the workspace are evaluated against the disk, so outcomes are measured while no editor is
open. The queue the fast lane fills is applied by `capture.hooks.queue`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from capture.config import Config
from capture.edits.evidence import NO_POST_EVENT
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
from capture.hooks.snapshot import Snapshot
from capture.hooks.trajectory_records import record_hook_steps
from capture.model import ProposalInput, State, TestRunInput
from capture.recording.recorder import Recorder
from capture.store.database import Store
from capture.store.hook_rows import (
    add_pending,
    drop_pending,
    remember_session,
    session_model,
    take_pending,
    take_pending_since,
)

__all__ = [
    "REPLAY_ENV",
    "IngestReport",
    "candidate_roots",
    "close_unanswered",
    "ingest",
    "observe_workspace",
    "root_containing",
]

#: Set (to 1) in the environment of `capture hook` when `capture import hooks` replays a log:
#: a replayed stream is not known to be complete.
REPLAY_ENV = "CAPTURE_HOOK_REPLAY"


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
    recorder: Recorder, run: TestRunInput, now: float, *, announced: bool = False
) -> str | None:
    """The run this shell call's report is (None for a pre-tool-use report: nothing ran yet)."""
    from capture.store.hook_rows import (
        remember_shell_run,
        remember_shell_start,
        shell_run,
        take_shell_start,
    )

    store = recorder.store
    key = run.dedupe_key or ""
    if announced:
        remember_shell_start(store.conn, key, now)
        return None
    existing = store.run_with_key(key)
    if existing is None and (known := shell_run(store.conn, key)) is not None:
        # merged into a run that carries the other source's key
        existing = store.run_with_id(known)
    if existing is not None:
        # a second report of one run (Cursor's afterShellExecution and postToolUse) may know
        # the exit code the first did not
        if run.exit_code is not None:
            store.fill_exit_code(existing[0], run.exit_code)
        return existing[0]
    began = take_shell_start(store.conn, key)
    if run.duration_s is None and began is not None and began <= now:
        # no duration reported: the call's window opens at its pre-tool-use report
        run.started_at, run.duration_s = began, round(now - began, 6)
    run_id = recorder.run(run, now=now)
    remember_shell_run(store.conn, key, run_id, now)
    return run_id


def _reject_pending(
    recorder: Recorder,
    call: Call,
    workspace_id: int | None,
    report: IngestReport,
    *,
    replayed: bool = False,
) -> None:
    """The turn ended with announced edits never reported back. In a live session the hook
    stream is complete: the call was denied. In a replayed log it is not (logs are cut, post
    entries missing): nothing says anyone refused, so the edit is `lost` (`no-post-event`)."""
    store = recorder.store
    for announced_at, proposal in take_pending(
        store.conn, call.agent, call.session_id, workspace_id
    ):
        _close_pending(recorder, announced_at, proposal, report, replayed=replayed)


def _close_pending(
    recorder: Recorder,
    announced_at: float,
    proposal: ProposalInput,
    report: IngestReport,
    *,
    replayed: bool,
) -> None:
    store = recorder.store
    relative = relative_to_workspace(Path(proposal.path), Path(proposal.workspace))
    if relative is None or (
        proposal.dedupe_key and store.proposal_with_key(proposal.dedupe_key) is not None
    ):
        return
    located = [LocatedHunk(h.old_text, h.new_text, None) for h in proposal.hunks]
    if replayed:
        proposal.state, proposal.decided_by = State.SHOWN, None
        report.proposals.append(
            recorder.edit(
                proposal, located, relative=relative, now=announced_at, lost=NO_POST_EVENT
            )
        )
    else:
        proposal.state = State.REJECTED
        proposal.decided_by = "denied"
        report.rejected.append(
            recorder.edit(proposal, located, relative=relative, now=announced_at)
        )
    if proposal.dedupe_key:
        recorder.settle_waiting_decisions(proposal.dedupe_key, now=announced_at)


def close_unanswered(store: Store, config: Config, agent: str, since: float) -> int:
    """After a replayed log: the edits it announced and never reported back are `lost`
    (`no-post-event`), not left waiting for a post-event that will never come. Returns how
    many."""
    recorder = Recorder(store, config)
    report = IngestReport(problems=[])
    with store.transaction():
        for announced_at, proposal in take_pending_since(store.conn, agent, since):
            _close_pending(recorder, announced_at, proposal, report, replayed=True)
    return len(report.proposals)


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
    replayed: bool = False,
) -> IngestReport:
    """Record one hook call. Problems are returned (for the log), never raised; store errors
    propagate to the caller, which logs them.

    `now` is the hook's moment; `snapshots` the files its payload named, as they were then
    (None: the call is being applied at its moment, so the disk is read). `observed_at`: when
    the disk is read afterwards (default `now`), to follow the edits there and to evaluate the
    checkpoints due by then. `replayed`: the payload comes from a replayed log, whose stream
    may lack entries (see `_reject_pending`)."""
    call = reading.call
    report = IngestReport(problems=list(reading.problems))
    roots = candidate_roots(call, fallback_cwd)
    root = roots[0] if roots else None
    if call.cwd and roots:
        root = root_containing(real(call.cwd), roots) or root
    report.root = root
    model = call.model
    if model is None and call.session_id:
        model = session_model(store.conn, call.agent, call.session_id)

    if call.agent == "codex":
        from capture.hooks.shell_patches import landed_shell_patches

        # before this call's own facts: its turn end must not take them for denials
        reading.facts[:0] = landed_shell_patches(store, call)
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

    recorder = Recorder(store, config)
    with store.transaction():
        recorder.event("hook", raw, at=now, source=f"{SOURCE}:{call.agent}", workspace=root)
        workspace_id = store.ensure_workspace(root, now) if root else None
        if workspace_id is not None and call.turn_id:
            store.adopt_turn(
                workspace_id=workspace_id,
                agent=call.agent,
                session_id=call.session_id,
                turn_id=call.turn_id,
                now=now,
            )
        _apply_facts(recorder, reading, prepared, workspace_id, model, report, now, replayed)
        record_hook_steps(
            recorder,
            config,
            call,
            raw,
            workspace_id,
            now=now,
            proposals=report.proposals,
            problems=report.problems,
        )
        for run in runs:
            announced = any(
                isinstance(f, Command) and f.announced and f.key == run.dedupe_key
                for f in reading.facts
            )
            run_id = _add_test_run(recorder, run, now, announced=announced)
            if run_id is None:
                continue
            report.test_runs.append(run_id)
            if workspace_id is not None:
                # run inside the agent's turn: it belongs to that turn's episode whatever the
                # clock says about its start
                episode = store.current_episode(
                    workspace_id=workspace_id,
                    agent=call.agent,
                    session_id=call.session_id,
                    turn_id=call.turn_id,
                    since=now - config.episode_gap,
                )
                if episode is not None:
                    recorder.link_run(episode, run_id)

    observed_at = now if observed_at is None else observed_at
    follow_to_disk(store, prepared, observed_at)
    touched = {p.proposal.workspace for p in prepared} | {r.workspace for r in runs}
    touched.discard(None)
    if root:
        touched.add(root)
    for workspace in sorted(w for w in touched if w):
        report.checkpoints += observe_workspace(store, config, workspace, observed_at)
    return report


def _apply_facts(
    recorder: Recorder,
    reading: Reading,
    prepared: list[Prepared],
    workspace_id: int | None,
    model: str | None,
    report: IngestReport,
    now: float,
    replayed: bool = False,
) -> None:
    """Record the payload's facts in order, inside the caller's transaction."""
    store, call = recorder.store, reading.call
    by_edit = {id(p.edit): p for p in prepared}
    for fact in reading.facts:
        if isinstance(fact, Edit):
            ready = by_edit.get(id(fact))
            if ready is None:
                if fact.stage is not Stage.PROPOSED:
                    drop_pending(store.conn, fact.key)  # it ran: never a denial
                continue
            if fact.stage is Stage.PROPOSED:
                if store.proposal_with_key(fact.key) is None:
                    ws = store.ensure_workspace(ready.proposal.workspace, now)
                    add_pending(
                        store.conn,
                        fact.key,
                        ready.proposal,
                        ws,
                        ready.relative,
                        now,
                        pre_image=ready.proposal.file_text,
                    )
                    report.pending.append(fact.key)
                    recorder.settle_waiting_decisions(fact.key, now=now)
                continue
            drop_pending(store.conn, fact.key)
            proposal_id = add_edit(recorder, ready, now)
            recorder.settle_waiting_decisions(fact.key, now=now)
            target = report.proposals if fact.stage is Stage.APPLIED else report.rejected
            target.append(proposal_id)
        elif isinstance(fact, Resolved):
            drop_pending(store.conn, fact.key)
        elif isinstance(fact, Prompt) and workspace_id is not None:
            if call.turn_id is None:
                store.end_open_episodes(
                    workspace_id=workspace_id,
                    agent=call.agent,
                    session_id=call.session_id,
                    now=now,
                )
            recorder.turn(
                workspace_id=workspace_id,
                agent=call.agent,
                now=now,
                session_id=call.session_id,
                turn_id=call.turn_id,
                model=model,
                prompt=fact.text,
                source=SOURCE,
            )
        elif isinstance(fact, TurnEnd):
            _reject_pending(recorder, call, workspace_id, report, replayed=replayed)
            recorder.end_turn(
                agent=call.agent,
                session_id=call.session_id,
                turn_id=call.turn_id,
                workspace_id=workspace_id,
                session_over=fact.session,
                now=now,
            )
        elif isinstance(fact, SessionStart) and call.session_id:
            remember_session(store.conn, call.agent, call.session_id, call.model, fact.source, now)


def observe_workspace(store: Store, config: Config, root: str, now: float) -> int:
    """Evaluate the workspace's due checkpoints against the disk; the observer (and what it
    imports) is loaded only when something is due."""
    if not store.due_checkpoints(now, workspace_root=root):
        return 0
    from capture.recording.observer import observe_due

    return observe_due(store, config, now=now, workspace_root=root).checkpoints
