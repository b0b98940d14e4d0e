"""The proposals feature's writer-thread jobs: what :mod:`server.proposals` asks of the store.

They run on the writer thread, never on the event loop, so they are kept apart from the
LSP-facing feature: each takes plain values (and the :class:`LiveProposal` it may fill in)
and the store last, as :class:`server.writer.StoreWriter` calls them.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from capture.config import Config
from capture.edits.hunks import locate
from capture.edits.regions import Region
from capture.files import read_text, relative_to_workspace
from capture.model import HunkInput, ProposalInput, State
from capture.recording.observer import ObserveReport, observe_file
from capture.recording.recorder import Recorder
from capture.store.database import Store
from server.live_proposal import LiveProposal
from server.params import ParamsError, ProposalParams
from server.stored import StoredProposal, load_live, sync_text
from server.surrogates import escape, escape_fields
from server.workspaces import inside_resolved, resolve, workspace_root

__all__ = ["decision_job", "open_job", "persist_job", "record_job"]

log = logging.getLogger(__name__)


def open_job(fs_path: str, store: Store) -> tuple[str, list[StoredProposal]]:
    file = resolve(fs_path)
    return file, load_live(store, file=file)


def persist_job(
    text: str,
    spans: list[tuple[LiveProposal, list[Region | None]]],
    now: float,
    observe: bool,
    store: Store,
) -> ObserveReport:
    # Store fields are read here, on the writer thread: a proposal recorded by an earlier job
    # has them by now even if the loop has not heard back yet.
    groups: dict[tuple[int, str], dict[int, tuple[int, int]]] = {}
    followed: dict[tuple[int, str], set[str]] = {}
    for live, regions in spans:
        if live.workspace_id is None or live.path is None or live.proposal_id is None:
            continue  # its record failed; it is being dropped
        place = (live.workspace_id, live.path)
        group = groups.setdefault(place, {})
        followed.setdefault(place, set()).add(live.proposal_id)
        for hunk_id, region in zip(live.hunk_ids, regions, strict=False):
            if region is not None:
                group[hunk_id] = (region.start, region.end)
    text = escape(text)  # the store's copy; same length, so the regions hold
    report = ObserveReport()
    for (workspace_id, path), spans_by_id in groups.items():
        sync_text(
            store,
            workspace_id,
            path,
            text,
            spans_by_id,
            followed=followed[(workspace_id, path)],
            now=now,
            via="editor",
        )
        if not observe:
            continue
        due = [
            c for c in store.due_checkpoints(now, paths=[path]) if c.workspace_id == workspace_id
        ]
        if due:
            observed = observe_file(store, workspace_id, path, text, due, now=now, via="editor")
            report.checkpoints += observed.checkpoints
            report.settled.extend(observed.settled)
    return report


def _carry_other_regions(store: Store, root: str, path: str, text: str, now: float) -> None:
    """Move the file's live regions to ``text`` before a new proposal makes it the baseline,
    so that the baseline stays true for the proposals already there."""
    relative = relative_to_workspace(Path(path), Path(root))
    if relative is None:
        return
    workspace_id = store.ensure_workspace(root, now)
    if store.baseline(workspace_id, relative) == text:
        # Nothing moved since the regions were last written (the loop writes them before a
        # proposal whenever they moved): no diff, no reading every live proposal of the file,
        # so a burst of proposals costs each one the same whatever the number already live.
        return
    if store.live_proposals(workspace_id, relative):
        observe_file(store, workspace_id, relative, text, (), now=now, via="editor")


def record_job(
    config: Config,
    p: ProposalParams,
    fs_path: str,
    hunks: list[HunkInput],
    text: str | None,
    live: LiveProposal | None,
    folders: list[str],
    only_inside: bool,
    known: set[str],
    now: float,
    raw: str,
    store: Store,
) -> list[StoredProposal]:
    if only_inside and not inside_resolved(fs_path, folders):
        # The loop judged the name; a symlink inside a folder may still lead out of it.
        log.warning("capture/proposal refused: %s leads outside the workspace folders", fs_path)
        return []
    path = resolve(fs_path)
    root = workspace_root(path, folders)
    # The store's copies; the same lengths, so what is located in them is where the loop
    # located it in the buffer.
    hunks = [escape_fields(h) for h in hunks]
    text = None if text is None else escape(text)
    dedupe_key = f"lsp:{p.editor_id}" if p.editor_id else None
    if dedupe_key is not None:
        known_id = store.proposal_with_key(dedupe_key)
        if known_id is not None:
            log.info("capture/proposal %s was already recorded as %s", p.editor_id, known_id)
            return []
    if text is not None:
        _carry_other_regions(store, root, path, text, now)
    proposal = ProposalInput(
        path=path,
        workspace=root,
        agent=p.agent,
        hunks=hunks,
        state=p.state,
        model=p.model,
        session_id=p.session_id,
        turn_id=p.turn_id,
        prompt=p.prompt,
        tool=p.tool,
        source="lsp",
        file_text=text,
        dedupe_key=dedupe_key,
        decided_by="user" if p.state is State.REJECTED else None,
    )
    proposal_id = Recorder(store, config).proposal(proposal, now=now, raw=raw)
    known.add(proposal_id)
    log.info("recorded %s proposal %s for %s", p.state.value, proposal_id, path)
    if p.state is not State.APPLIED:
        return []
    # A proposal the loop follows already needs no copy of the file's text: a burst of them
    # would hold one per proposal until the batch is delivered.
    stored = load_live(store, ids=[proposal_id], baselines=live is None)
    if live is not None and stored:
        live.fill(stored[0])
    return stored


def decision_job(
    config: Config,
    proposal_id: str | None,
    editor_id: str | None,
    accepted: bool,
    decided_by: str,
    text: str | None,
    hints: list[int | None],
    live: LiveProposal | None,
    known: set[str],
    now: float,
    raw: str,
    store: Store,
) -> list[StoredProposal]:
    recorder = Recorder(store, config)
    if proposal_id is None:
        proposal_id = store.proposal_with_key(f"lsp:{editor_id}")
        if proposal_id is None:
            raise ParamsError(f"capture/decision: no proposal with id {editor_id!r}")
    row = store.proposal_row(proposal_id)
    root = store.workspace_root(row["workspace_id"])
    recorder.event("decision", raw, at=now, source="lsp", workspace=root)
    if row["state"] != State.SHOWN.value:
        log.info("capture/decision for %s ignored: it is %s", proposal_id, row["state"])
        return []
    if not accepted:
        recorder.decision(proposal_id, accepted=False, decided_by=decided_by, now=now)
        return []
    file = os.path.join(root, row["path"])
    text = read_text(Path(file)) if text is None else escape(text)
    located = None
    if text is not None:
        _carry_other_regions(store, root, file, text, now)
        hunk_rows = store.hunk_rows(proposal_id)
        located = locate(
            text,
            [
                HunkInput(h["old_text"], h["new_text"], start=hints[i] if i < len(hints) else None)
                for i, h in enumerate(hunk_rows)
            ],
        )
    recorder.decision(
        proposal_id,
        accepted=True,
        decided_by=decided_by,
        now=now,
        located=located,
        file_text=text,
    )
    known.add(proposal_id)
    # A proposal the loop follows already needs no copy of the file's text: a burst of them
    # would hold one per proposal until the batch is delivered.
    stored = load_live(store, ids=[proposal_id], baselines=live is None)
    if live is not None and stored:
        live.fill(stored[0])
    return stored
