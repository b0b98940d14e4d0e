"""The recording front door: every source records what it saw through a `Recorder`, which
appends each input to the raw event log and applies it to the domain tables in one transaction,
so the log and the tables never disagree, and holds the one call that writes a proposal row.

`record_proposal` and `record_test_run` are the same for a caller with a store and nothing else
to record (a run needs no configuration)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capture.config import Config
from capture.errors import InputError
from capture.files import read_text, relative_to_workspace
from capture.model import CaseResult, Outcome, ProposalInput, State, TestRunInput
from capture.store.database import Store
from capture.store.trajectory_rows import StepRow
from capture.testruns.testfiles import file_of_test_id, workspace_relative

if TYPE_CHECKING:
    from capture.edits.hunks import LocatedHunk
    from capture.store.decision_rows import DecisionRow
    from capture.store.proposal_rows import Settled

__all__ = [
    "Recorder",
    "failing_cases",
    "proposal_payload",
    "record_proposal",
    "record_test_run",
    "run_payload",
]


def proposal_payload(proposal: ProposalInput) -> str:
    data: dict[str, Any] = dataclasses.asdict(proposal)
    data.pop("file_text", None)
    return json.dumps(data, default=str)


class Recorder:
    """The way into the domain tables for every source (hooks, importers, the server, `capture
    propose`, the test-run sources): one store and the configuration pieces recording needs
    (the checkpoint windows, the late check, the episode gap), assembled once.

    A method records one thing: a reported proposal (`proposal`), an edit already placed in its
    file (`edit`), a past edit judged as it is recorded (`backfilled`), a decision on a shown
    proposal, a test run (`test_run` with its event, `run` without), the turn a prompt opens and
    the end of a turn. Each writes in one transaction (the caller's, when one is open), so the
    event log and the tables never disagree."""

    __slots__ = ("store", "config")

    def __init__(self, store: Store, config: Config) -> None:
        self.store = store
        self.config = config

    # -- the event log -------------------------------------------------------------------------

    def event(
        self,
        kind: str,
        payload: Any,
        *,
        at: float,
        source: str | None = None,
        workspace: str | None = None,
    ) -> int:
        """Append one input, as received, to the event log."""
        return self.store.append_event(kind, payload, at=at, source=source, workspace=workspace)

    def file_change(self, root: str, path: str, text: str | None, *, at: float) -> int:
        """A tracked file's new text as a watcher saw it at `at` (None: the file is gone):
        appended to the event log, where a checkpoint due then is rebuilt from it
        (`capture.recording.observer`). Regions move when the checkpoint is evaluated."""
        from capture.store.change_rows import FILE_CHANGE, change_payload

        with self.store.transaction():
            return self.event(
                FILE_CHANGE, change_payload(path, text), at=at, source="watcher", workspace=root
            )

    # -- proposals -----------------------------------------------------------------------------

    def proposal(self, proposal: ProposalInput, *, now: float, raw: str | None = None) -> str:
        """Record one reported proposal with its event (`raw`, or the proposal itself); returns
        its id. Raises InputError when the file cannot be used."""
        from capture.edits.hunks import LocatedHunk, locate  # not needed on the test-run path

        path = Path(proposal.path)
        root = Path(proposal.workspace)
        relative = relative_to_workspace(path, root)
        if relative is None:
            raise InputError(f"{path} is outside the workspace {root}")
        located: list[LocatedHunk]
        if proposal.state is State.APPLIED:
            text = proposal.file_text if proposal.file_text is not None else read_text(path)
            if text is None:
                if not path.exists():
                    raise InputError(f"{path}: no such file")
                raise InputError(
                    f"{path}: not a UTF-8 text file (or larger than the tracking limit)"
                )
            proposal.file_text = text
            located = locate(text, proposal.hunks)
        else:
            located = [LocatedHunk(h.old_text, h.new_text, None) for h in proposal.hunks]
        with self.store.transaction():
            self.event(
                "proposal",
                raw if raw is not None else proposal_payload(proposal),
                at=now,
                source=proposal.source,
                workspace=str(root),
            )
            return self.edit(proposal, located, relative=relative, now=now)

    def edit(
        self,
        proposal: ProposalInput,
        located: Sequence[LocatedHunk],
        *,
        relative: str,
        now: float,
        lost: str | None = None,
    ) -> str:
        """Record an edit placed in the text its file held right after it (`proposal.file_text`),
        the file's earlier live proposals carried to that text first; returns its id. `lost`:
        why an applied edit cannot be followed (it is recorded `lost`, with that reason)."""
        from capture.recording.observer import follow_to

        with self.store.transaction():
            follow_to(self.store, proposal, relative, now=now)
            proposal_id = self._add(proposal, located, relative=relative, now=now)
            if lost is not None:
                self.store.set_outcome(
                    proposal_id,
                    outcome=Outcome.LOST,
                    reason=lost,
                    similarity=None,
                    retention=None,
                    settled_at=now,
                )
            return proposal_id

    def backfilled(
        self,
        proposal: ProposalInput,
        located: Sequence[LocatedHunk],
        *,
        relative: str,
        now: float,
        settled: Settled | None,
        episode: tuple[int, str],
    ) -> str:
        """Record a past edit in the episode the caller ensured (`episode`: its workspace id and
        episode id), judged already (`settled`; None: it was rejected)."""
        return self._add(
            proposal, located, relative=relative, now=now, settled=settled, episode=episode
        )

    def _add(
        self,
        proposal: ProposalInput,
        located: Sequence[LocatedHunk],
        *,
        relative: str,
        now: float,
        settled: Settled | None = None,
        episode: tuple[int, str] | None = None,
    ) -> str:
        # the one place a proposal row is written: with the windows it is checked at
        return self.store.add_proposal(
            proposal,
            located,
            relative_path=relative,
            now=now,
            windows=self.config.windows,
            late=self.config.late,
            gap=self.config.episode_gap,
            settled=settled,
            episode=episode,
        )

    def decision(
        self,
        proposal_id: str,
        *,
        accepted: bool,
        decided_by: str | None,
        now: float,
        located: Sequence[LocatedHunk] | None = None,
        file_text: str | None = None,
    ) -> None:
        """Accept (apply, its checkpoints scheduled from now) or reject a shown proposal."""
        if not accepted:
            self.store.decide_proposal(proposal_id, accepted=False, decided_by=decided_by, now=now)
            return
        self.store.decide_proposal(
            proposal_id,
            accepted=True,
            decided_by=decided_by,
            now=now,
            located=located,
            file_text=file_text,
            windows=self.config.windows,
            late=self.config.late,
        )

    def explicit_decision(self, row: DecisionRow, *, now: float) -> str | None:
        """Record a decision an agent's telemetry reported (who accepted or rejected one of its
        tool calls) and apply it to the call's proposals; see `capture.recording.decisions`."""
        from capture.recording.decisions import record_decision

        return record_decision(self, row, now=now)

    def settle_waiting_decisions(self, key: str, *, now: float) -> None:
        """Apply the decisions that arrived before the edit keyed `key` was recorded."""
        from capture.recording.decisions import settle_waiting

        settle_waiting(self, key, now=now)

    # -- test runs -----------------------------------------------------------------------------

    def test_run(
        self,
        run: TestRunInput,
        *,
        now: float,
        raw: str | None = None,
        late_seconds: float | None = None,
    ) -> str:
        """Record one test run with its event (`raw`, or the run itself); see
        `record_test_run`."""
        return record_test_run(self.store, run, now=now, raw=raw, late_seconds=late_seconds)

    def run(
        self,
        run: TestRunInput,
        *,
        now: float,
        late_seconds: float | None = None,
        link: bool = True,
    ) -> str:
        """Record a run whose event the caller logged (a hook payload) or that has none (an
        import); `link=False` leaves its episodes to the caller (`link_run`)."""
        return _add_run(self.store, run, now=now, late_seconds=late_seconds, link=link)

    def link_run(self, episode_id: str, run_id: str) -> None:
        """Link a run to the episode of the turn it ran in."""
        self.store.link_run(episode_id, run_id)

    # -- turns ---------------------------------------------------------------------------------

    def turn(
        self,
        *,
        workspace_id: int,
        agent: str,
        now: float,
        session_id: str | None = None,
        turn_id: str | None = None,
        model: str | None = None,
        prompt: str | None = None,
        source: str | None = None,
    ) -> str:
        """The episode of an agent's turn: the one its ids name, else the agent's open one in
        the workspace within the episode gap, else a new one."""
        with self.store.transaction():
            episode = self.store.ensure_episode(
                workspace_id=workspace_id,
                agent=agent,
                now=now,
                gap=self.config.episode_gap,
                session_id=session_id,
                turn_id=turn_id,
                model=model,
                prompt=prompt,
                source=source,
            )
            if prompt:
                self.follow_up(episode, prompt, now=now)
            return episode

    def follow_up(self, episode_id: str, prompt: str, *, now: float) -> str | None:
        """Classify the prompt that opened `episode_id` as the follow-up of the agent's episode
        before it, and keep it (the first one only); returns that episode's id. Its tier is
        decided again: a dissatisfied follow-up keeps it from gold."""
        from capture.followups.rules import RULES_VERSION, classify
        from capture.store.followup_rows import FollowUpRow, predecessor_episode, record_followup

        previous = predecessor_episode(self.store.conn, episode_id)
        if previous is None:
            return None
        reading = classify(prompt)
        row = FollowUpRow(reading.label.value, reading.rule, RULES_VERSION, episode_id, now)
        if record_followup(self.store.conn, previous, row):
            from capture.recording.late_tiers import recompute_tiers

            recompute_tiers(self.store, [previous], now=now)
        return previous

    def end_turn(
        self,
        *,
        agent: str,
        session_id: str | None,
        turn_id: str | None,
        workspace_id: int | None,
        session_over: bool,
        now: float,
    ) -> None:
        """The agent's turn (or with `session_over`, its whole session) ended: close its
        episode, or the open ones it leaves."""
        if turn_id and not session_over:
            self.store.end_turn_episode(
                agent=agent, session_id=session_id, turn_id=turn_id, now=now
            )
        elif session_over and session_id:
            self.store.end_session_episodes(agent=agent, session_id=session_id, now=now)
        elif workspace_id is not None:
            self.store.end_open_episodes(
                workspace_id=workspace_id, agent=agent, session_id=session_id, now=now
            )

    # -- the trajectory ------------------------------------------------------------------------

    def steps(self, steps: Sequence[StepRow], *, now: float) -> int:
        """What the agent saw and did, in order (`capture.store.trajectory_rows`): steps
        recorded before, by their key, are not recorded again."""
        return self.store.add_steps(steps, now=now)

    def before_text(self, proposal_id: str, text: str, *, via: str, now: float) -> None:
        """The whole file as the agent's edit found it, kept with the proposal."""
        self.store.set_before_text(proposal_id, text, via, now=now)

    def task(self, episode_id: str, task: str | None, source: str | None) -> None:
        """The request an episode's work answers and where it came from (set once)."""
        if task is not None:
            self.store.set_task(episode_id, task, source)


def record_proposal(
    store: Store,
    config: Config,
    proposal: ProposalInput,
    *,
    now: float,
    raw: str | None = None,
) -> str:
    """Record one proposal; returns its id (`Recorder.proposal`)."""
    return Recorder(store, config).proposal(proposal, now=now, raw=raw)


def record_test_run(
    store: Store,
    run: TestRunInput,
    *,
    now: float,
    raw: str | None = None,
    late_seconds: float | None = None,
) -> str:
    """Record one test run (event and domain rows in one transaction); returns its id. Failing
    ids given without per-test results become failing results, with the file their id names
    made relative to the workspace. Needs no configuration: a run's episodes are found within
    `late_seconds` (the store's default late window when None)."""
    if not run.cases and run.failing_ids:
        run.cases = failing_cases(run.failing_ids, run.cwd, run.workspace)
    with store.transaction():
        store.append_event(
            "test_run",
            raw if raw is not None else run_payload(run),
            at=now,
            source=run.source,
            workspace=run.workspace,
        )
        return _add_run(store, run, now=now, late_seconds=late_seconds)


def _add_run(
    store: Store,
    run: TestRunInput,
    *,
    now: float,
    late_seconds: float | None = None,
    link: bool = True,
) -> str:
    # the one place a test run row is written
    if late_seconds is None:
        return store.add_test_run(run, now=now, link=link)
    return store.add_test_run(run, now=now, late_seconds=late_seconds, link=link)


def run_payload(run: TestRunInput) -> str:
    """The event log's copy of a run; per-test results as rows (dataclasses.asdict would copy
    each of thousands of results field by field)."""
    data: dict[str, Any] = {
        f.name: getattr(run, f.name) for f in dataclasses.fields(run) if f.name != "cases"
    }
    data["cases"] = [[c.test_id, c.outcome, c.file, c.classname, c.duration_s] for c in run.cases]
    return json.dumps(data, separators=(",", ":"))


def failing_cases(ids: list[str], cwd: str | None, workspace: str | None) -> list[CaseResult]:
    base = ""
    if cwd and workspace:
        base = relative_to_workspace(Path(cwd), Path(workspace)) or ""
        base = "" if base == "." else base
    cases = []
    for test_id in ids:
        file = file_of_test_id(test_id)
        cases.append(
            CaseResult(test_id, "failed", workspace_relative(file, base) if file else None)
        )
    return cases
