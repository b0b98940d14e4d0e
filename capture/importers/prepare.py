"""A transcript read and judged with no database, so worker processes can do it while the
main process writes: its edits as proposals with their outcomes, its test commands as runs.
What comes out is plain data for `write`; the caches live as long as a worker does.
"""

from __future__ import annotations

import os
from pathlib import Path

from capture.edits.evidence import WORKSPACE_ABSENT, not_applied
from capture.edits.hunks import LocatedHunk
from capture.edits.outcomes import Measurement
from capture.files import find_workspace, read_text
from capture.hooks.agents.facts import Stage
from capture.hooks.agents.patches import hunks_between, trim_context
from capture.importers.git_history import GitHistory
from capture.importers.judge import Context, contexts_from_after, judge
from capture.importers.records import History, PastEdit, PastRun, Turn
from capture.model import HunkInput, Outcome, ProposalInput, State, TestRunInput
from capture.tiers.late_signals import added_lines

__all__ = [
    "SOURCE",
    "Caches",
    "Judged",
    "Prepared",
    "PreparedEdit",
    "PreparedRun",
    "measures_of",
    "prepare",
]

SOURCE = "import"


def _inside(path: str, root: str) -> str | None:
    """`path` relative to `root` (both real paths), or None outside it. Strings, not pathlib:
    this runs for every edit of every transcript."""
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    relative = path[len(prefix) :]
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


class Caches:
    def __init__(self, git: GitHistory) -> None:
        self.roots: dict[str, str] = {}
        self.texts: dict[str, str | None] = {}
        self.reals: dict[str, str] = {}
        self.git = git

    def real(self, path: str) -> str:
        if path not in self.reals:
            self.reals[path] = os.path.realpath(path)
        return self.reals[path]

    def root(self, cwd: str) -> str:
        if cwd not in self.roots:
            real = os.path.realpath(cwd)
            self.roots[cwd] = str(find_workspace(Path(real), Path(real)))
        return self.roots[cwd]

    def text(self, path: str) -> str | None:
        if path not in self.texts:
            self.texts[path] = read_text(Path(path))
        return self.texts[path]


def _contexts(past: PastEdit, hunks: list[HunkInput]) -> list[Context]:
    if past.after is not None:
        return contexts_from_after(past.after, hunks)
    if past.contexts is not None and len(past.contexts) == len(hunks):
        return list(past.contexts)
    return [(None, None)] * len(hunks)


class Judged:
    """Outcome of an applied past edit: the windows' (judged against `via`'s text) and the
    late check's (the file now)."""

    __slots__ = ("outcome", "reason", "sim", "ret", "via", "late_outcome", "late_sim", "late_ret")

    def __init__(
        self,
        outcome: Outcome,
        reason: str,
        sim: float | None,
        ret: float | None,
        via: str,
        late: tuple[Outcome, float | None, float | None],
    ) -> None:
        self.outcome = outcome
        self.reason = reason
        self.sim = sim
        self.ret = ret
        self.via = via
        self.late_outcome, self.late_sim, self.late_ret = late


class PreparedEdit:
    __slots__ = ("proposal", "located", "relative", "at", "judged", "past")

    def __init__(
        self,
        proposal: ProposalInput,
        located: list[LocatedHunk],
        relative: str,
        at: float,
        judged: Judged | None,
        past: PastEdit | None = None,
    ) -> None:
        self.proposal = proposal
        self.located = located
        self.relative = relative
        self.at = at
        self.judged = judged
        self.past = past  # the transcript's telling of it


class PreparedRun:
    __slots__ = ("run", "turn")

    def __init__(self, run: TestRunInput, turn: Turn | None) -> None:
        self.run = run
        self.turn = turn


class Prepared:
    """One transcript, read and judged, ready to be written."""

    __slots__ = ("history", "edits", "runs", "outside")

    def __init__(self, history: History) -> None:
        self.history = history
        self.edits: list[PreparedEdit] = []
        self.runs: list[PreparedRun] = []
        self.outside = 0


def measures_of(measured: Measurement) -> tuple[float | None, float | None]:
    if measured.lost:
        return None, None
    return measured.similarity, measured.retention


def _prepare_edit(history: History, past: PastEdit, caches: Caches) -> PreparedEdit | None:
    edit = past.edit
    cwd = past.cwd or history.cwd
    path = caches.real(edit.path)
    root = caches.root(cwd) if cwd else None
    relative = _inside(path, root) if root else None
    if root is None or relative is None:
        return None
    hunks = edit.hunks
    if edit.written is not None and not edit.created_file and edit.original is not None:
        hunks = hunks_between(edit.original, edit.written)
    hunks = [trim_context(h) for h in hunks]
    turn = past.turn
    applied = edit.stage is Stage.APPLIED
    state, reason, decided_by = (State.APPLIED, None, None) if applied else not_applied(edit.error)
    proposal = ProposalInput(
        path=path,
        workspace=root,
        agent=history.agent,
        hunks=hunks,
        state=state,
        model=turn.model if turn else None,
        session_id=history.session_id,
        turn_id=turn.turn_id if turn else None,
        prompt=turn.prompt if turn else None,
        tool=edit.tool,
        tool_use_id=edit.tool_use_id,
        source=SOURCE,
        created_file=edit.created_file,
        backfilled=True,
        dedupe_key=edit.key,
        decided_by=decided_by,
        reason=reason,
    )
    if not applied:
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in hunks]
        return PreparedEdit(proposal, located, relative, past.at, None, past)
    workspace_here = os.path.isdir(root)
    now_text = caches.text(path) if workspace_here else None
    # the agent's added text, line by line (a hunk may hold part of a line): a commit carries
    # the edit when its file holds any of it
    added = added_lines((h.old_text, h.new_text) for h in hunks)
    carries = (lambda text: any(line in text for line in added)) if added else None
    committed = caches.git.after(root, relative, past.at, carries) if workspace_here else None
    # the windows are judged against the commit that carried the agent's lines when there is
    # one (the nearest later state on record that holds them), the late check against the file
    # now; lines no commit carried are judged against the file now
    gone = now_text is None and not os.path.lexists(path)
    if gone and not committed:
        # the workspace (or the file) is not on this machine and no commit holds it: nothing
        # was seen after the edit, so nothing says it was undone (or kept)
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in hunks]
        lost = (Outcome.LOST, None, None)
        judged = Judged(Outcome.LOST, WORKSPACE_ABSENT, None, None, SOURCE, lost)
        return PreparedEdit(proposal, located, relative, past.at, judged, past)
    contexts = _contexts(past, hunks)
    created = edit.created_file
    if committed:
        located, measured, outcome, reason = judge(committed[1], hunks, contexts)
        via = "git"
    else:
        located, measured, outcome, reason = judge(
            now_text, hunks, contexts, gone=gone, created_file=created
        )
        via = SOURCE
    sim, ret = measures_of(measured)
    late = (outcome, sim, ret)
    if committed:
        _, late_measured, late_outcome, _ = judge(
            now_text, hunks, contexts, gone=gone, created_file=created
        )
        late = (late_outcome, *measures_of(late_measured))
    judged = Judged(outcome, reason, sim, ret, via, late)
    return PreparedEdit(proposal, located, relative, past.at, judged, past)


def _prepare_run(
    history: History, past: PastRun, caches: Caches, patterns: tuple[str, ...]
) -> PreparedRun | None:
    from capture.testruns.commands import runner_of
    from capture.testruns.summaries import parse_summary

    command = past.command
    cwd = past.cwd or history.cwd
    runner = runner_of(command.command, patterns)
    if runner is None or cwd is None:
        return None
    counts = parse_summary(command.output) if command.output else None
    run = TestRunInput(
        command=command.command,
        source=SOURCE,
        started_at=past.at,
        workspace=caches.root(cwd),
        name=runner if command.failure is None else f"{runner} ({command.failure})",
        cwd=caches.real(cwd),
        duration_s=command.duration_s,
        exit_code=command.exit_code,
        passed=counts.passed if counts else None,
        failed=counts.failed if counts else None,
        errors=counts.errors if counts else None,
        skipped=counts.skipped if counts else None,
        failing_ids=list(counts.failing_ids) if counts else [],
        dedupe_key=command.key,
    )
    return PreparedRun(run, past.turn)


def prepare(history: History, caches: Caches, patterns: tuple[str, ...]) -> Prepared:
    """Judge a transcript's edits and read its test commands (files and git, no database)."""
    prepared = Prepared(history)
    for past in history.edits:
        edit = _prepare_edit(history, past, caches)
        if edit is None:
            prepared.outside += 1
        else:
            prepared.edits.append(edit)
    for run in history.runs:
        ready = _prepare_run(history, run, caches, patterns)
        if ready is not None:
            prepared.runs.append(ready)
    return prepared
