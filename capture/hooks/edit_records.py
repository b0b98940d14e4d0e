"""An agent's edit, from the facts of its hook payload to a proposal row.

The text the edit produced is fixed at the hook's moment: rebuilt from the payload where it
carries the file (a write's content, the file before the edit with the edit's strings), else
the fast lane's snapshot of the file, else the disk when the call is applied at its moment.
The hunks are placed in that text, the proposal is recorded there, and its regions are then
carried to the disk as the applier finds it, so whatever happened in between is tracked as a
change to the edit. An applied edit that cannot be followed is recorded applied and `lost`,
with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from capture.edits.evidence import not_applied
from capture.edits.hunks import LocatedHunk, locate
from capture.edits.placement import carry, context_in_pre_image, pin, rebuild
from capture.files import MAX_TRACKED_BYTES, decode_text, relative_to_workspace
from capture.hooks.agents.facts import Call, Edit, Stage
from capture.hooks.agents.patches import fit_hunks, trim_context
from capture.hooks.roots import real, root_containing
from capture.hooks.snapshot import Snapshot, take
from capture.model import HunkInput, Outcome, ProposalInput, State
from capture.recording.recorder import Recorder
from capture.store.database import Store
from capture.store.hook_rows import pending_pre_image, pending_proposal

__all__ = ["SOURCE", "Prepared", "add_edit", "follow_to_disk", "prepare_edit"]

SOURCE = "hook"


class Prepared:
    __slots__ = ("edit", "proposal", "relative", "located", "lost")

    def __init__(
        self,
        edit: Edit,
        proposal: ProposalInput,
        relative: str,
        located: list[LocatedHunk],
        lost: str | None = None,
    ) -> None:
        self.edit = edit
        self.proposal = proposal
        self.relative = relative
        self.located = located
        self.lost = lost  # why an applied edit cannot be followed (recorded `lost` with it)


def _baseline_before(store: Store, root: str, relative: str, now: float) -> str | None:
    """The last text seen of the file, if it was seen before this hook's moment (a baseline
    read later already holds what came after the edit)."""
    workspace_id = store.workspace_id(root)
    seen = None if workspace_id is None else store.baseline_seen(workspace_id, relative)
    return None if seen is None or seen[1] > now else seen[0]


def _original_of(
    store: Store, edit: Edit, root: str, relative: str, pre_image: str | None, now: float
) -> str | None:
    """The file before a whole-file write: from the payload, from the pre-tool-use hook's
    snapshot or record, or the last text seen of the file."""
    if edit.original is not None:
        return edit.original
    if pre_image is not None:
        return pre_image
    pending = pending_proposal(store.conn, edit.key)
    if pending is not None and len(pending.hunks) == 1 and pending.hunks[0].start == 0:
        return pending.hunks[0].old_text
    return _baseline_before(store, root, relative, now)


def _whole_file_hunks(before: str | None, written: str) -> tuple[list[HunkInput], bool]:
    """Hunks of writing `written` over `before` (None: the file did not exist)."""
    if before is None:
        return [HunkInput("", written, line=1)], True
    from capture.hooks.agents.patches import hunks_between

    return hunks_between(before, written), False


#: What the log says of each reason an applied edit cannot be followed.
_LOST_BECAUSE = {
    "deleted": "no such file",
    "too-large": "larger than the tracking limit",
    "binary": "not a UTF-8 text file",
    "unreadable": "not a regular file that can be read",
    "no-edit-content": "the payload carries no edit content",
}


def _read(path: str, snapshots: Mapping[str, Snapshot] | None) -> tuple[str | None, str | None]:
    """The file's text at the hook's moment (its snapshot, or the disk when the fast lane kept
    none), or None with the reason it cannot be followed."""
    snapshot = None if snapshots is None else snapshots.get(path)
    if snapshot is None:
        snapshot = take(path, MAX_TRACKED_BYTES)
    return _decoded(snapshot)


def _decoded(snapshot: Snapshot) -> tuple[str | None, str | None]:
    if snapshot.content is None:
        return None, snapshot.problem or "unreadable"
    text = decode_text(snapshot.content)
    return (text, None) if text is not None else (None, "binary")


def _placed(
    text: str, hunks: list[HunkInput], before: str | None
) -> tuple[list[HunkInput], list[LocatedHunk]]:
    """The hunks as the file spells them, and where each is; a hunk nothing can place without
    guessing is kept unplaced, with the lines around its old text, for relocation."""
    fitted = fit_hunks(text, hunks)
    pinned = pin(text, fitted, before)
    found = iter(locate(text, [h for h in pinned if h is not None]))
    located = []
    for hunk, placed in zip(fitted, pinned, strict=True):
        spot = next(found) if placed is not None else None
        if spot is None or spot.span is None:
            before_ctx, after_ctx = context_in_pre_image(before, hunk)
            spot = LocatedHunk(hunk.old_text, hunk.new_text, None, before_ctx, after_ctx)
        located.append(spot)
    return fitted, located


def prepare_edit(
    store: Store,
    call: Call,
    edit: Edit,
    roots: list[str],
    model: str | None,
    problems: list[str],
    *,
    now: float,
    snapshots: Mapping[str, Snapshot] | None,
) -> Prepared | None:
    path = real(edit.path)
    root = root_containing(path, roots)
    if root is None:
        where = roots[0] if roots else "no workspace"
        problems.append(f"{path} is outside the workspace ({where}); ignored")
        return None
    relative = relative_to_workspace(Path(path), Path(root)) or ""
    hunks = edit.hunks
    created = edit.created_file
    text: str | None = None
    lost: str | None = None
    reason: str | None = None
    decided_by: str | None = None
    located: list[LocatedHunk]
    if edit.stage is Stage.APPLIED:
        pre_image = pending_pre_image(store.conn, edit.key)
        before = edit.original if edit.original is not None else pre_image
        rebuilt = None
        if edit.written is not None:
            # the payload holds the whole file the agent wrote: the moment itself
            text = edit.written
            if not created:
                before = _original_of(store, edit, root, relative, pre_image, now)
                if before is not None:
                    hunks, _ = _whole_file_hunks(before, edit.written)
        elif before is not None and hunks:
            rebuilt = rebuild(before, hunks)
        if rebuilt is not None:
            text, hunks = rebuilt.text, rebuilt.hunks
        elif text is None:
            text, lost = _read(path, snapshots)
        if before is None:
            before = _baseline_before(store, root, relative, now)
        if not hunks and lost is None:
            lost = "no-edit-content"
        if lost is not None:
            why = _LOST_BECAUSE.get(lost, lost)
            problems.append(f"{path}: {why}; recorded as applied, outcome lost ({lost})")
            located = [LocatedHunk(h.old_text, h.new_text, None) for h in hunks]
        else:
            assert text is not None
            hunks, located = _placed(text, hunks, before)
        state = State.APPLIED
    else:
        pending = pending_proposal(store.conn, edit.key) if edit.stage is Stage.FAILED else None
        if edit.denied and pending is None:
            # a batch lists the calls that ran too (their results are text as well): only a
            # call still announced and never reported done was denied
            return None
        if pending is not None:
            hunks, created = pending.hunks, pending.created_file
        elif edit.written is not None and not created:
            # nothing was written (yet): the file holds the text the write would replace
            before, problem = _read(path, snapshots)
            if before is None and problem == "binary":
                problems.append(f"{path}: not a UTF-8 text file; ignored")
                return None
            hunks, created = _whole_file_hunks(before, edit.written)
        hunks = [trim_context(h) for h in hunks]
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in hunks]
        if edit.stage is Stage.PROPOSED:
            text, _ = _read(path, snapshots)  # the pre-image, kept with the pending record
        # a pre-event's row waits for its post-event (`State.SHOWN` until then, see ingest);
        # a failed call is `failed` unless its error is a refusal
        state = State.SHOWN
        if edit.stage is Stage.FAILED:
            if edit.denied:  # the agent reported the denial: positive evidence of a refusal
                state, reason, decided_by = State.REJECTED, None, "denied"
            else:
                state, reason, decided_by = not_applied(edit.error)
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
        file_text=None if lost else text,
        created_file=created,
        dedupe_key=edit.key,
        decided_by=decided_by,
        reason=reason,
    )
    return Prepared(edit, proposal, relative, located, lost)


def add_edit(recorder: Recorder, prepared: Prepared, now: float) -> str:
    store = recorder.store
    proposal = prepared.proposal
    located = prepared.located
    if proposal.state is State.APPLIED and proposal.file_text is not None:
        workspace_id = store.ensure_workspace(proposal.workspace, now)
        seen = store.baseline_seen(workspace_id, prepared.relative)
        if seen is not None and seen[1] > now and seen[0] is not None:
            # The store read this file after the hook's moment (an earlier payload of the queue
            # followed it to the disk): place the edit in its own moment, then carry it there.
            located = carry(located, proposal.file_text, seen[0])
            proposal.file_text = None
    proposal_id = recorder.edit(
        proposal, located, relative=prepared.relative, now=now, lost=prepared.lost
    )
    edit = prepared.edit
    if edit.denied and edit.error and proposal.state is State.REJECTED:
        # the denial's own words: positive evidence of a refusal, not an inference
        store.set_outcome(
            proposal_id,
            outcome=Outcome.REJECTED,
            reason=f"denied: {edit.error[:500]}",
            similarity=None,
            retention=None,
            settled_at=now,
        )
    return proposal_id


def follow_to_disk(store: Store, prepared: list[Prepared], observed_at: float) -> None:
    """Move the regions of each file an edit was placed in from the hook's moment to the disk
    as it is now, so what happened in between is tracked as changes to the edit."""
    from capture.recording.observer import observe_file

    seen: set[tuple[str, str]] = set()
    for ready in prepared:
        proposal = ready.proposal
        key = (proposal.workspace, ready.relative)
        if proposal.state is not State.APPLIED or ready.lost is not None or key in seen:
            continue
        seen.add(key)
        text, _ = _decoded(take(proposal.path, MAX_TRACKED_BYTES))
        if text is None:
            continue  # gone or unreadable now: the checkpoints will say so
        workspace_id = store.ensure_workspace(proposal.workspace, observed_at)
        if store.baseline(workspace_id, ready.relative) != text:
            observe_file(store, workspace_id, ready.relative, text, (), now=observed_at, via="disk")
