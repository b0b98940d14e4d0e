"""Evaluate due checkpoints against the files on disk (used by `capture observe`, the hook
commands and the server for files no editor holds open)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from capture.config import Config
from capture.files import read_text
from capture.model import Outcome, State
from capture.outcomes import decide
from capture.regions import Region
from capture.store import DueCheckpoint, Store
from capture.tracking import TrackedHunk, follow, measure_hunks

__all__ = ["ObserveReport", "observe_due", "observe_file", "tracked_hunks"]

TextSource = Callable[[str, str], "str | None"]


@dataclass(slots=True)
class ObserveReport:
    checkpoints: int = 0
    settled: list[str] = field(default_factory=list)


def _disk_text(root: str, path: str) -> str | None:
    return read_text(Path(root) / path)


def tracked_hunks(store: Store, proposal_id: str) -> list[tuple[int, TrackedHunk]]:
    hunks = []
    for row in store.hunk_rows(proposal_id):
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
) -> ObserveReport:
    """Move the regions of every live proposal of one file to `text`, then record the due
    checkpoints. One short transaction."""
    report = ObserveReport()
    with store.transaction():
        baseline = store.baseline(workspace_id, path)
        per_proposal: dict[str, list[tuple[int, TrackedHunk]]] = {}
        for proposal in store.live_proposals(workspace_id, path):
            hunks = tracked_hunks(store, proposal["id"])
            if text is not None:
                regions = follow(baseline, text, [h for _, h in hunks])
                store.update_regions(
                    {
                        hid: (r.start, r.end) if r else None
                        for (hid, _), r in zip(hunks, regions, strict=True)
                    }
                )
                hunks = [
                    (hid, TrackedHunk(h.old_text, h.new_text, r, h.context_before, h.context_after))
                    for (hid, h), r in zip(hunks, regions, strict=True)
                ]
            per_proposal[proposal["id"]] = hunks
        if text is not None:
            store.set_baseline(workspace_id, path, text, now)
        for checkpoint in due:
            live = per_proposal.get(checkpoint.proposal_id)
            if live is None:
                continue
            measurement = measure_hunks(text, [h for _, h in live])
            outcome, reason = decide(State.APPLIED, measurement)
            sim = None if measurement.lost else measurement.similarity
            ret = None if measurement.lost else measurement.retention
            store.record_checkpoint(
                checkpoint.checkpoint_id,
                observed_at=now,
                similarity=sim,
                retention=ret,
                outcome=outcome,
                via=via,
            )
            report.checkpoints += 1
            if checkpoint.window == "late":
                continue
            final = checkpoint.is_final
            store.set_outcome(
                checkpoint.proposal_id,
                outcome=outcome if final else Outcome.PENDING,
                reason=reason if final else f"at {checkpoint.window}: {outcome.value}",
                similarity=sim,
                retention=ret,
                settled_at=now if final else None,
            )
            if final:
                report.settled.append(checkpoint.proposal_id)
    return report


def observe_due(
    store: Store,
    config: Config,
    *,
    now: float,
    workspace_root: str | None = None,
    paths: Sequence[str] = (),
    text_of: TextSource = _disk_text,
    via: str = "disk",
) -> ObserveReport:
    """Evaluate every checkpoint due at `now`, one file at a time."""
    del config  # windows are fixed per checkpoint when it is scheduled
    due = store.due_checkpoints(now, workspace_root=workspace_root, paths=paths)
    by_file: dict[tuple[int, str, str], list[DueCheckpoint]] = defaultdict(list)
    for checkpoint in due:
        by_file[(checkpoint.workspace_id, checkpoint.root, checkpoint.path)].append(checkpoint)
    total = ObserveReport()
    for (workspace_id, root, path), checkpoints in by_file.items():
        text = text_of(root, path)
        report = observe_file(store, workspace_id, path, text, checkpoints, now=now, via=via)
        total.checkpoints += report.checkpoints
        total.settled.extend(report.settled)
    return total
