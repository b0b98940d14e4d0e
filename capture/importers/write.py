"""Prepared transcripts into the store, in the main process, through the recording front door
(`capture.recording.recorder.Recorder`): one transaction per transcript (the caller's batch,
when one is open), under the keys the live hooks use, so an edit a hook recorded is not
recorded again and importing twice adds nothing twice.
"""

from __future__ import annotations

import time

from capture.config import Config
from capture.edits.evidence import WORKSPACE_ABSENT
from capture.importers.git_history import GitHistory
from capture.importers.prepare import SOURCE, Caches, Prepared, PreparedEdit, prepare
from capture.importers.records import History, PastEdit
from capture.importers.trajectory import write_trajectory
from capture.model import State
from capture.moments import checked, checked_duration
from capture.recording.recorder import Recorder
from capture.store.database import Store
from capture.store.proposal_rows import Observed, Settled

__all__ = ["ImportStats", "record_history", "write"]


class ImportStats:
    __slots__ = (
        "files",
        "skipped",
        "proposals",
        "rejected",
        "failed",
        "absent",
        "known",
        "runs",
        "outside",
        "bad",
    )

    def __init__(self) -> None:
        self.files = 0  # read and recorded
        self.skipped = 0  # imported before and unchanged since
        self.proposals = 0
        self.rejected = 0  # refused, as the transcript says
        self.failed = 0  # tool calls that failed: nobody refused them
        self.absent = 0  # lost: the workspace or the file is not on this machine
        self.known = 0  # recorded before (by a hook or an earlier import)
        self.runs = 0
        self.outside = 0  # edits of files outside any workspace
        self.bad = 0  # unreadable lines or files

    def summary(self) -> str:
        return (
            f"{self.files} file(s) imported, {self.skipped} unchanged since the last import; "
            f"{self.proposals} proposal(s) ({self.rejected} rejected), {self.runs} test run(s); "
            f"{self.failed} failed tool call(s), {self.absent} lost ({WORKSPACE_ABSENT}); "
            f"{self.known} already recorded, {self.outside} outside any workspace, "
            f"{self.bad} unreadable line(s)"
        )


class _Episodes:
    """The workspaces and episodes of one transcript's records. A turn's episode is ensured
    once; its later records only move its last activity, written before anything reads it
    (`flush`): they come in time order and say the same model and prompt, so the rows end up
    as if each record had ensured it. Episodes without a turn id are found by time."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.store = recorder.store
        self.workspaces: dict[str, int] = {}
        self.turns: dict[tuple[str | None, ...], str] = {}
        self.moved: dict[str, float] = {}  # last activity not written yet, by episode
        self.by_turn: dict[str, str] = {}  # episode by turn id, for the trajectory

    def workspace(self, root: str, at: float) -> int:
        if root not in self.workspaces:
            self.workspaces[root] = self.store.ensure_workspace(root, at)
        return self.workspaces[root]

    def episode(
        self,
        root: str,
        at: float,
        *,
        agent: str,
        session_id: str | None,
        turn_id: str | None,
        model: str | None,
        prompt: str | None,
        source: str = SOURCE,
    ) -> tuple[int, str]:
        workspace_id = self.workspace(root, at)
        key = (agent, session_id, turn_id, model, prompt, source)
        if turn_id and key in self.turns:
            episode_id = self.turns[key]
            self.moved[episode_id] = max(self.moved.get(episode_id, at), at)
            return workspace_id, episode_id
        if not turn_id:
            self.flush()  # found by its last activity: every episode's must be written
        episode_id = self.recorder.turn(
            workspace_id=workspace_id,
            agent=agent,
            now=at,
            session_id=session_id,
            turn_id=turn_id,
            model=model,
            prompt=prompt,
            source=source,
        )
        if turn_id:
            self.turns[key] = episode_id
            self.by_turn.setdefault(turn_id, episode_id)
        return workspace_id, episode_id

    def flush(self) -> None:
        self.store.move_last_activity(self.moved)
        self.moved.clear()


def _write_edit(recorder: Recorder, ready: PreparedEdit, now: float, episodes: _Episodes) -> str:
    judged = ready.judged
    settled = None
    if judged is not None:
        settled = Settled(
            at=now,
            outcome=judged.outcome,
            reason=judged.reason,
            windows=Observed(judged.sim, judged.ret, judged.outcome, judged.via),
            late=Observed(judged.late_sim, judged.late_ret, judged.late_outcome, SOURCE),
        )
    # settled at once; its episode is settled once the whole transcript is in (write)
    proposal = ready.proposal
    return recorder.backfilled(
        proposal,
        ready.located,
        relative=ready.relative,
        now=ready.at,
        settled=settled,
        episode=episodes.episode(
            proposal.workspace,
            ready.at,
            agent=proposal.agent,
            session_id=proposal.session_id,
            turn_id=proposal.turn_id,
            model=proposal.model,
            prompt=proposal.prompt,
            source=proposal.source,
        ),
    )


def write(
    store: Store, config: Config, prepared: Prepared, *, now: float, stats: ImportStats
) -> None:
    """Record one prepared transcript, in one transaction (the caller's, when one is open)."""
    history = prepared.history
    stats.outside += prepared.outside
    recorder = Recorder(store, config)
    _believable_times(prepared, wall=max(now, time.time()))
    with store.transaction():
        ensured = _Episodes(recorder)
        episodes: set[str] = set()
        recorded: list[str] = []
        told: list[tuple[str, PastEdit]] = []  # each recorded proposal and its telling
        seen: list[PreparedEdit] = []  # recorded before: their episodes get the trajectory
        known = store.known_proposal_keys([e.proposal.dedupe_key or "" for e in prepared.edits])
        for ready in prepared.edits:
            key = ready.proposal.dedupe_key or ""
            if key in known:
                stats.known += 1
                seen.append(ready)
                continue
            known.add(key)  # a transcript may tell one call twice
            recorded.append(_write_edit(recorder, ready, now, ensured))
            if ready.past is not None:
                told.append((recorded[-1], ready.past))
            stats.proposals += 1
            state = ready.proposal.state
            stats.rejected += state is State.REJECTED
            stats.failed += state is State.FAILED
            stats.absent += ready.judged is not None and ready.judged.reason == WORKSPACE_ABSENT
        runs_known = store.known_run_keys([r.run.dedupe_key or "" for r in prepared.runs])
        for ready_run in prepared.runs:
            run = ready_run.run
            if run.dedupe_key in runs_known or run.workspace is None:
                continue
            runs_known.add(run.dedupe_key or "")
            run_id = recorder.run(run, now=run.started_at, link=False)
            stats.runs += 1
            turn = ready_run.turn
            _, episode = ensured.episode(
                run.workspace,
                run.started_at,
                agent=history.agent,
                session_id=history.session_id,
                turn_id=turn.turn_id if turn else None,
                model=turn.model if turn else None,
                prompt=turn.prompt if turn else None,
            )
            episodes.add(episode)
            recorder.link_run(episode, run_id)
        episodes.update(store.episodes_of(recorded))
        ensured.flush()
        by_turn = dict(ensured.by_turn)
        earlier = store.episodes_of_proposal_keys([r.proposal.dedupe_key or "" for r in seen])
        for ready in seen:
            found = earlier.get(ready.proposal.dedupe_key or "")
            turn = ready.past.turn if ready.past else None
            if found is not None and turn is not None:
                by_turn.setdefault(turn.turn_id, found)
                # an episode recorded before from less of the session learns its task here
                recorder.task(found, turn.task, turn.task_source)
        write_trajectory(recorder, history, by_turn, told, now=now)
        # a past session is over: its turns are closed episodes, settled when every proposal
        # has its outcome (all of them have, unless an earlier import left one open)
        store.close_past_episodes(sorted(episodes), now)


def _believable_times(prepared: Prepared, *, wall: float) -> None:
    """A transcript's time outside 2000 .. a day from now becomes the time of the import
    (logged): one bad line must not put a row in the store that no command can show."""
    for ready in prepared.edits:
        ready.at = checked(ready.at, wall=wall, what="transcript edit time")
    for ready_run in prepared.runs:
        run = ready_run.run
        run.started_at = checked(run.started_at, wall=wall, what="transcript test run time")
        run.duration_s = checked_duration(run.duration_s, what="transcript test run duration")


def record_history(
    store: Store, config: Config, history: History, *, now: float, stats: ImportStats
) -> None:
    """Judge and record one transcript (both steps in this process)."""
    caches = Caches(GitHistory())
    write(store, config, prepare(history, caches, config.test_commands), now=now, stats=stats)
