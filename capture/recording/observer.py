"""Evaluate due checkpoints against the files on disk (used by `capture observe`, the hook
commands and the server for files no editor holds open)."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from capture.config import Config
from capture.edits.evidence import Author
from capture.edits.history import Change, Coverage, text_at
from capture.edits.outcomes import decide
from capture.edits.regions import Region
from capture.edits.tracking import TrackedHunk, follow, measure_gone, measure_hunks
from capture.edits.windows import lateness
from capture.files import read_text
from capture.model import ProposalInput, State
from capture.recording.coverage import watched_coverage
from capture.store.change_rows import changes_by_file
from capture.store.checkpoint_rows import CheckpointResult, DueCheckpoint
from capture.store.database import Store
from capture.store.lease_rows import leased_elsewhere

__all__ = [
    "DISK_LATE",
    "DISK_WATCHED",
    "AuthorOf",
    "ObserveReport",
    "agent_covering",
    "follow_to",
    "observe_due",
    "observe_file",
    "tracked_hunks",
]

#: How a checkpoint read the region: rebuilt from the changes a watcher recorded, on time.
DISK_WATCHED = "disk-watched"
#: Read on disk after its due time, because nothing recorded what the file held then.
DISK_LATE = "disk-late"


class _Unset:
    pass


_UNSET = _Unset()

FILES_PER_TRANSACTION = 32

TextSource = Callable[[str, str], "str | None"]
ExistsSource = Callable[[str, str], bool]


@dataclass(slots=True)
class ObserveReport:
    checkpoints: int = 0
    settled: list[str] = field(default_factory=list)


def _disk_text(root: str, path: str) -> str | None:
    return read_text(Path(root) / path)


def _on_disk(root: str, path: str) -> bool:
    return os.path.lexists(os.path.join(root, path))


def tracked_hunks(store: Store, proposal_id: str) -> list[tuple[int, TrackedHunk]]:
    return _as_tracked(store.hunk_rows(proposal_id))


#: Who made a change to a region, from its text before and after (None: cannot tell).
AuthorOf = Callable[[str, str], str | None]


def _user(before: str, after: str) -> str | None:
    return Author.USER


def agent_covering(old_texts: Sequence[str]) -> AuthorOf:
    """The agent, for a region its edit replaced text of (the edit's old text and the region's
    text overlap); None for any other change the same write carried."""
    olds = [t for t in old_texts if t.strip()]

    def author(before: str, after: str) -> str | None:
        region = before.strip()
        if region and any(region in t or t in before for t in olds):
            return Author.AGENT
        return None

    return author


def _changed_by(
    author: AuthorOf,
    before: str,
    after: str,
    old: Sequence[tuple[int, TrackedHunk]],
    new: Sequence[tuple[int, TrackedHunk]],
) -> str | None:
    """Who changed a proposal's regions, if a change altered any (None: none did, or unknown)."""
    for (_, a), (_, b) in zip(old, new, strict=True):
        was = before[a.region.start : a.region.end] if a.region is not None else ""
        now = after[b.region.start : b.region.end] if b.region is not None else ""
        if (a.region is None) != (b.region is None) or was != now:
            who = author(was, now)
            if who is not None:
                return who
    return None


def _as_tracked(rows: Sequence[Any]) -> list[tuple[int, TrackedHunk]]:
    hunks = []
    for row in rows:
        region = None
        if row["region_start"] is not None and row["status"] != "lost":
            region = Region(row["region_start"], row["region_end"])
        hunks.append(
            (
                int(row["id"]),
                TrackedHunk(
                    row["old_text"],
                    row["new_text"],
                    region,
                    row["context_before"],
                    row["context_after"],
                ),
            )
        )
    return hunks


def observe_file(
    store: Store,
    workspace_id: int,
    path: str,
    text: str | None,
    due: Sequence[DueCheckpoint],
    *,
    now: float,
    via: str,
    gone: bool = False,
    author: AuthorOf | None = None,
) -> ObserveReport:
    """Move the regions of every live proposal of one file to `text`, then record the due
    checkpoints. One short transaction. `gone`: the file no longer exists (`text` is None).
    `author`: who made a change to a region (its text before and after), when the caller can
    tell (an agent's later edit that covers it); a change in an editor's buffer is the user's.
    A proposal whose region changed is marked with its author; unknown authors mark nothing."""
    if author is None and via == "editor":
        author = _user
    report = ObserveReport()
    with store.transaction():
        baseline = store.baseline(workspace_id, path)
        proposals = store.live_proposals(workspace_id, path)
        created = {p["id"]: bool(p["created_file"]) for p in proposals}
        rows = store.hunk_rows_of([p["id"] for p in proposals])
        per_proposal = {pid: _as_tracked(hunk_rows) for pid, hunk_rows in rows.items()}
        if text is not None and per_proposal:
            # One diff of the file for all of its hunks.
            flat = [pair for hunks in per_proposal.values() for pair in hunks]
            regions = iter(follow(baseline, text, [h for _, h in flat]))
            moved: dict[int, tuple[int, int] | None] = {}
            changed: list[tuple[str, str]] = []
            for proposal_id, hunks in per_proposal.items():
                updated = []
                for hunk_id, h in hunks:
                    r = next(regions)
                    moved[hunk_id] = (r.start, r.end) if r else None
                    updated.append((hunk_id, replace(h, region=r)))
                if author is not None and baseline is not None:
                    who = _changed_by(author, baseline, text, hunks, updated)
                    if who is not None:
                        changed.append((proposal_id, who))
                per_proposal[proposal_id] = updated
            store.update_regions(moved)
            for who in {w for _, w in changed}:
                store.set_author([p for p, w in changed if w == who], who)
        if text is not None and text != baseline:
            store.set_baseline(workspace_id, path, text, now)
        results: list[CheckpointResult] = []
        for checkpoint in due:
            live = per_proposal.get(checkpoint.proposal_id)
            if live is None:
                continue
            held = [h for _, h in live]
            if gone:
                measurement = measure_gone(held, created_file=created[checkpoint.proposal_id])
            else:
                measurement = measure_hunks(text, held)
            outcome, reason = decide(State.APPLIED, measurement)
            results.append(
                CheckpointResult(
                    checkpoint_id=checkpoint.checkpoint_id,
                    proposal_id=checkpoint.proposal_id,
                    window=checkpoint.window,
                    similarity=None if measurement.lost else measurement.similarity,
                    retention=None if measurement.lost else measurement.retention,
                    outcome=outcome,
                    reason=reason,
                    final=checkpoint.is_final,
                    late_seconds=lateness(checkpoint.due_at, now),
                )
            )
        store.record_checkpoints(results, observed_at=now, via=via)
        report.checkpoints += len(results)
        report.settled.extend(r.proposal_id for r in results if r.final)
    return report


def follow_to(store: Store, proposal: ProposalInput, relative_path: str, *, now: float) -> None:
    """Before a new proposal sets a file's baseline to the text right after its edit, move the
    regions of the file's earlier live proposals to that text, so they stay relative to it."""
    if proposal.state is not State.APPLIED or proposal.file_text is None:
        return
    workspace_id = store.ensure_workspace(proposal.workspace, now)
    if store.baseline(workspace_id, relative_path) == proposal.file_text:
        return  # nothing moved since the regions were last placed
    if store.live_proposals(workspace_id, relative_path):
        # the change from the baseline to this text is the agent's own edit (or holds it)
        observe_file(
            store,
            workspace_id,
            relative_path,
            proposal.file_text,
            (),
            now=now,
            via="disk",
            author=agent_covering([h.old_text for h in proposal.hunks]),
        )


def observe_due(
    store: Store,
    config: Config,
    *,
    now: float,
    workspace_root: str | None = None,
    paths: Sequence[str] = (),
    text_of: TextSource = _disk_text,
    exists: ExistsSource = _on_disk,
    via: str = "disk",
    coverage: Coverage | None | _Unset = _UNSET,
    owner: str | None = None,
) -> ObserveReport:
    """Evaluate every checkpoint due at `now`, one file at a time. A checkpoint whose due time
    the watcher's recorded changes cover is rebuilt from them (`via` disk-watched, on time);
    the others read the disk now, `disk-late` when that is late. `coverage`: the span the
    changes cover (default: the watcher's status file says).

    A file another process holds a live lease on (its unsaved buffer,
    `capture.store.lease_rows`) is left to that process: its edits are never judged from the
    disk. `owner`: the caller's own lease name."""
    if isinstance(coverage, _Unset):
        coverage = watched_coverage(config.paths.state_dir)
    due = store.due_checkpoints(now, workspace_root=workspace_root, paths=paths)
    held = leased_elsewhere(store.conn, owner, now) if due else set()
    if held:
        due = [c for c in due if (c.workspace_id, c.path) not in held]
    by_file: dict[tuple[int, str, str], list[DueCheckpoint]] = defaultdict(list)
    for checkpoint in due:
        by_file[(checkpoint.workspace_id, checkpoint.root, checkpoint.path)].append(checkpoint)
    total = ObserveReport()
    files = list(by_file.items())
    recorded = {}
    if coverage is not None and files:
        # a change that counts is one the watcher recorded after the edit: none is older than
        # the earliest due time less the longest window (a late check reads only what is left)
        oldest = min(c.due_at for c in due) - config.final_window.seconds - 1.0
        recorded = changes_by_file(store.conn, max(coverage.start, oldest), coverage.until)
    # Files are grouped into transactions of a few dozen: one commit per file costs more than
    # the work, and a group still holds the write lock for only tens of milliseconds.
    for i in range(0, len(files), FILES_PER_TRANSACTION):
        with store.transaction():
            for (workspace_id, root, path), checkpoints in files[i : i + FILES_PER_TRANSACTION]:
                if coverage is not None:
                    changes = recorded.get((root, path), [])
                    checkpoints = _replay(
                        store, workspace_id, path, changes, checkpoints, coverage, total
                    )
                if not checkpoints:
                    continue
                text = text_of(root, path)
                gone = text is None and not exists(root, path)
                for late, group in _by_lateness(checkpoints, now):
                    report = observe_file(
                        store,
                        workspace_id,
                        path,
                        text,
                        group,
                        now=now,
                        via=DISK_LATE if late and via == "disk" else via,
                        gone=gone,
                    )
                    total.checkpoints += report.checkpoints
                    total.settled.extend(report.settled)
    if total.settled:
        # Outcomes settled: the tiers they decide are kept now, whoever observed them (a hook's
        # drain, the server, `capture observe`).
        from capture.recording.late_tiers import episodes_of, recompute_tiers

        recompute_tiers(store, episodes_of(store, total.settled), now=now)
    return total


def _by_lateness(
    checkpoints: Sequence[DueCheckpoint], now: float
) -> list[tuple[bool, list[DueCheckpoint]]]:
    on_time = [c for c in checkpoints if lateness(c.due_at, now) is None]
    late = [c for c in checkpoints if lateness(c.due_at, now) is not None]
    return [(False, on_time), (True, late)]


def _replay(
    store: Store,
    workspace_id: int,
    path: str,
    changes: Sequence[tuple[float, str | None]],
    checkpoints: Sequence[DueCheckpoint],
    coverage: Coverage,
    total: ObserveReport,
) -> list[DueCheckpoint]:
    """Evaluate the checkpoints whose due time the recorded changes cover, in time order, each
    against the text the file held then; returns the others. The regions move from the last
    text measured straight to that text, as from a read of the disk: not through every change
    in between, which may be a moment of a write (git truncates a file, then writes it)."""
    last_due = max(c.due_at for c in checkpoints)
    if last_due < coverage.start:
        return list(checkpoints)
    seen = store.baseline_seen(workspace_id, path)
    baseline = None if seen is None else Change(seen[1], seen[0])
    recorded = [Change(at, text) for at, text in changes if at <= last_due]
    if not recorded:
        return list(checkpoints)
    left: list[DueCheckpoint] = []
    for checkpoint in sorted(checkpoints, key=lambda c: c.due_at):
        known, text = text_at(recorded, checkpoint.due_at, coverage, baseline)
        if not known:
            left.append(checkpoint)
            continue
        report = observe_file(
            store,
            workspace_id,
            path,
            text,
            [checkpoint],
            now=checkpoint.due_at,
            via=DISK_WATCHED,
            gone=text is None,
        )
        total.checkpoints += report.checkpoints
        total.settled.extend(report.settled)
    return left
