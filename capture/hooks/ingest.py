"""Recording what one hook payload says: the shell between an agent's `Reading` and the store.

Files are read and hunks located before the write transaction; the raw payload is appended to
the event log in the same transaction as every domain write it causes, so the log and the tables
never disagree. Afterwards the due checkpoints of the workspace are evaluated against the disk,
so outcomes are measured while no editor is open.
"""

from __future__ import annotations

import os
from pathlib import Path

from capture.config import Config
from capture.edits.hunks import LocatedHunk, locate
from capture.files import find_workspace, read_text, relative_to_workspace
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
from capture.hooks.agents.patches import fit_hunks, trim_context
from capture.hooks.sessions import (
    add_pending,
    adopt_turn,
    current_episode,
    drop_pending,
    end_open_episodes,
    episode_key,
    pending_proposal,
    remember_session,
    session_model,
    take_pending,
)
from capture.model import HunkInput, ProposalInput, State, TestRunInput
from capture.store.database import Store

__all__ = ["IngestReport", "candidate_roots", "drain", "ingest", "queued", "root_containing"]

SOURCE = "hook"


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


def _real(path: str) -> str:
    return os.path.realpath(path)


def candidate_roots(call: Call, fallback_cwd: str | None = None) -> list[str]:
    """Workspace roots for this call, most trusted first: what the payload or the agent's
    environment names as the project, the git work tree around the agent's cwd, the cwd."""
    roots = [_real(r) for r in call.roots if r]
    cwd = call.cwd or (None if roots else fallback_cwd)
    if cwd:
        cwd = _real(cwd)
        roots.append(str(find_workspace(Path(cwd), Path(cwd))))
        roots.append(cwd)
    return list(dict.fromkeys(roots))


def root_containing(path: str, roots: list[str]) -> str | None:
    for root in roots:
        if relative_to_workspace(Path(path), Path(root)) is not None:
            return root
    return None


class _Prepared:
    __slots__ = ("edit", "proposal", "relative", "located")

    def __init__(
        self, edit: Edit, proposal: ProposalInput, relative: str, located: list[LocatedHunk]
    ) -> None:
        self.edit = edit
        self.proposal = proposal
        self.relative = relative
        self.located = located


def _workspace_id(store: Store, root: str) -> int | None:
    row = store.conn.execute("SELECT id FROM workspaces WHERE root = ?", (root,)).fetchone()
    return None if row is None else int(row[0])


def _original_of(store: Store, edit: Edit, root: str, relative: str) -> str | None:
    """The file before a whole-file write: from the payload, from the pre-tool-use record, or
    the last text seen of the file."""
    if edit.original is not None:
        return edit.original
    pending = pending_proposal(store, edit.key)
    if pending is not None and len(pending.hunks) == 1 and pending.hunks[0].start == 0:
        return pending.hunks[0].old_text
    workspace_id = _workspace_id(store, root)
    return None if workspace_id is None else store.baseline(workspace_id, relative)


def _whole_file_hunks(before: str | None, written: str) -> tuple[list[HunkInput], bool]:
    """Hunks of writing `written` over `before` (None: the file did not exist)."""
    if before is None:
        return [HunkInput("", written, line=1)], True
    from capture.hooks.agents.patches import hunks_between

    return hunks_between(before, written), False


def _prepare(
    store: Store, call: Call, edit: Edit, roots: list[str], model: str | None, report: IngestReport
) -> _Prepared | None:
    path = _real(edit.path)
    root = root_containing(path, roots)
    if root is None:
        where = roots[0] if roots else "no workspace"
        report.problems.append(f"{path} is outside the workspace ({where}); ignored")
        return None
    relative = relative_to_workspace(Path(path), Path(root)) or ""
    hunks = edit.hunks
    created = edit.created_file
    text: str | None = None
    if edit.stage is Stage.APPLIED:
        text = read_text(Path(path))
        if text is None:
            reason = "no such file" if not os.path.exists(path) else "not a UTF-8 text file"
            report.problems.append(f"{path}: {reason} (or larger than the tracking limit); ignored")
            return None
        if edit.written is not None and not created:
            before = _original_of(store, edit, root, relative)
            if before is not None:
                hunks, _ = _whole_file_hunks(before, edit.written)
        if not hunks:
            report.problems.append(f"{path}: the payload carries no edit content; ignored")
            return None
        hunks = fit_hunks(text, hunks)
        located = locate(text, hunks)
        state = State.APPLIED
    else:
        pending = pending_proposal(store, edit.key) if edit.stage is Stage.FAILED else None
        if pending is not None:
            hunks, created = pending.hunks, pending.created_file
        elif edit.written is not None and not created:
            # nothing was written (yet): the disk holds the text the write would replace
            before = read_text(Path(path))
            if before is None and os.path.exists(path):
                report.problems.append(f"{path}: not a UTF-8 text file; ignored")
                return None
            hunks, created = _whole_file_hunks(before, edit.written)
        hunks = [trim_context(h) for h in hunks]
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in hunks]
        state = State.REJECTED
    proposal = ProposalInput(
        path=path,
        workspace=root,
        agent=call.agent,
        hunks=hunks,
        state=state,
        model=model,
        session_id=call.session_id,
        turn_id=call.turn_id,
        tool=edit.tool,
        tool_use_id=edit.tool_use_id,
        source=SOURCE,
        file_text=text,
        created_file=created,
        dedupe_key=edit.key,
        decided_by="tool-failure" if edit.stage is Stage.FAILED else None,
    )
    return _Prepared(edit, proposal, relative, located)


def _add(store: Store, config: Config, prepared: _Prepared, now: float) -> str:
    from capture.recording.observer import follow_to

    follow_to(store, prepared.proposal, prepared.relative, now=now)
    return store.add_proposal(
        prepared.proposal,
        prepared.located,
        relative_path=prepared.relative,
        now=now,
        windows=config.windows,
        late=config.late,
        gap=config.episode_gap,
    )


def _proposal_exists(store: Store, key: str) -> bool:
    row = store.conn.execute("SELECT 1 FROM proposals WHERE dedupe_key = ?", (key,)).fetchone()
    return row is not None


def _test_run(
    config: Config, call: Call, command: Command, roots: list[str], now: float
) -> TestRunInput | None:
    from capture.testruns.commands import runner_of

    runner = runner_of(command.command, config.test_commands)
    if runner is None:
        return None
    from capture.testruns.summaries import parse_summary

    counts = parse_summary(command.output) if command.output else None
    given = command.cwd or call.cwd
    cwd = _real(given) if given else None
    root = (root_containing(cwd, roots) if cwd else None) or (roots[0] if roots else None)
    started = now - command.duration_s if command.duration_s else now
    return TestRunInput(
        command=command.command,
        source=SOURCE,
        started_at=started,
        workspace=root,
        name=runner if command.failure is None else f"{runner} ({command.failure})",
        cwd=cwd,
        duration_s=command.duration_s,
        exit_code=command.exit_code,
        passed=counts.passed if counts else None,
        failed=counts.failed if counts else None,
        errors=counts.errors if counts else None,
        skipped=counts.skipped if counts else None,
        failing_ids=list(counts.failing_ids) if counts else [],
        dedupe_key=command.key,
    )


def _add_test_run(store: Store, run: TestRunInput, now: float) -> str:
    existing = store.conn.execute(
        "SELECT id, exit_code FROM test_runs WHERE dedupe_key = ?", (run.dedupe_key,)
    ).fetchone()
    if existing is not None:
        # a second report of one run (Cursor's afterShellExecution and postToolUse) may know
        # the exit code the first did not
        if existing[1] is None and run.exit_code is not None:
            store.conn.execute(
                "UPDATE test_runs SET exit_code = ? WHERE id = ?", (run.exit_code, existing[0])
            )
        return str(existing[0])
    return store.add_test_run(run, now=now)


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
) -> IngestReport:
    """Record one hook call. Problems are returned (for the log), never raised; store errors
    propagate to the caller, which logs them."""
    call = reading.call
    report = IngestReport(problems=list(reading.problems))
    roots = candidate_roots(call, fallback_cwd)
    root = roots[0] if roots else None
    if call.cwd and roots:
        root = root_containing(_real(call.cwd), roots) or root
    report.root = root
    model = call.model
    if model is None and call.session_id:
        model = session_model(store, call.agent, call.session_id)

    prepared: list[_Prepared] = []
    for fact in reading.facts:
        if isinstance(fact, Edit):
            ready = _prepare(store, call, fact, roots, model, report)
            if ready is not None:
                prepared.append(ready)
    runs = [
        run
        for fact in reading.facts
        if isinstance(fact, Command)
        for run in [_test_run(config, call, fact, roots, now)]
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
                    continue
                if fact.stage is Stage.PROPOSED:
                    if not _proposal_exists(store, fact.key):
                        ws = store.ensure_workspace(ready.proposal.workspace, now)
                        add_pending(store, fact.key, ready.proposal, ws, ready.relative, now)
                        report.pending.append(fact.key)
                    continue
                drop_pending(store, fact.key)
                proposal_id = _add(store, config, ready, now)
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
            run_id = _add_test_run(store, run, now)
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

    touched = {p.proposal.workspace for p in prepared} | {r.workspace for r in runs}
    touched.discard(None)
    if root:
        touched.add(root)
    for workspace in sorted(w for w in touched if w):
        report.checkpoints += observe_workspace(store, config, workspace, now)
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


def drain(store: Store, config: Config) -> int:
    """Apply the hook payloads queued by the fast lane, and the runs `capture run` queued,
    oldest first; returns how many.

    A lock file makes one process at a time do it, so payloads of one agent turn are applied in
    the order the agent sent them. A payload that cannot be applied is logged and taken off the
    queue: it must never block the ones behind it.
    """
    import fcntl

    from capture.hooks.agents import AGENTS, read_payload
    from capture.hooks.inbox import decode_env
    from capture.hooks.log import log_line
    from capture.hooks.payloads import parse_payload
    from capture.testruns.sources.handoff import RUN_AGENT

    lock_path = store.path.with_name(store.path.name + ".hooks.lock")
    applied = 0
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        while True:
            rows = store.conn.execute(
                "SELECT id, at, agent, event, payload, cwd, env FROM hook_inbox "
                "ORDER BY id LIMIT 64"
            ).fetchall()
            if not rows:
                return applied
            for row in rows:
                agent, event = row["agent"], row["event"]
                raw = bytes(row["payload"])
                problems: list[str] = []
                try:
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
                            store, config, reading, text, now=row["at"], fallback_cwd=row["cwd"]
                        )
                        problems.extend(report.problems)
                except Exception as exc:  # noqa: BLE001 - logged; the queue moves on
                    problems.append(f"internal error: {type(exc).__name__}: {exc}")
                for problem in problems:
                    log_line(config.paths.log_dir, agent, event, problem)
                with store.transaction():
                    store.conn.execute("DELETE FROM hook_inbox WHERE id = ?", (row["id"],))
                applied += 1


def queued(store: Store) -> int:
    """Payloads waiting in the fast lane's queue (0 on a store without the queue)."""
    try:
        return int(store.conn.execute("SELECT count(*) FROM hook_inbox").fetchone()[0])
    except Exception:  # noqa: BLE001 - an older store has no queue
        return 0
