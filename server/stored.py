"""Reading back, and writing forward, the live proposals the store holds.

These run on the writer thread or the pickup thread, never on the event loop. A proposal is
*live* while it is applied and has a checkpoint not yet observed (the late check included).
Its hunks' regions in the store are relative to the file's baseline text (``tracked_files``);
the two are always read, and written, together.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from capture.edits.tracking import TrackedHunk
from capture.recording.observer import observe_file, tracked_hunks
from capture.store.database import Store

__all__ = ["StoredProposal", "load_live", "max_proposal_rowid", "sync_text"]


@dataclass(frozen=True, slots=True)
class StoredProposal:
    """A live proposal as the store holds it, with the baseline its regions refer to."""

    proposal_id: str
    rowid: int
    workspace_id: int
    root: str
    path: str  # relative to root
    hunks: tuple[tuple[int, TrackedHunk], ...]  # (hunk id, hunk)
    due: tuple[float, ...]  # checkpoints not observed yet
    baseline: str | None

    @property
    def file(self) -> str:
        return os.path.join(self.root, self.path)


def load_live(
    store: Store,
    *,
    file: str | None = None,
    ids: Sequence[str] | None = None,
    after_rowid: int | None = None,
    baselines: bool = True,
) -> list[StoredProposal]:
    """Live proposals, oldest first: all of them, those of one file (absolute, resolved),
    those with the given ids, or those inserted after a rowid. ``baselines=False``: without
    the file's text (None), for a caller that already follows the regions in a buffer."""
    if ids is not None and not ids:
        return []
    texts: dict[tuple[int, str], str | None] = {}
    found: list[StoredProposal] = []
    for row in store.live_proposals_everywhere(ids=ids, after_rowid=after_rowid):
        if file is not None and os.path.join(row["root"], row["path"]) != file:
            continue
        key = (int(row["workspace_id"]), str(row["path"]))
        if key not in texts:
            texts[key] = store.baseline(*key) if baselines else None
        due = store.unobserved_due_times(row["id"])
        found.append(
            StoredProposal(
                proposal_id=str(row["id"]),
                rowid=int(row["rid"]),
                workspace_id=key[0],
                root=str(row["root"]),
                path=key[1],
                hunks=tuple(tracked_hunks(store, row["id"])),
                due=due,
                baseline=texts[key],
            )
        )
    return found


def max_proposal_rowid(store: Store) -> int:
    return store.max_proposal_rowid()


def sync_text(
    store: Store,
    workspace_id: int,
    path: str,
    text: str,
    spans: Mapping[int, tuple[int, int]],
    *,
    followed: Set[str],
    now: float,
    via: str,
) -> None:
    """Make ``text`` the file's baseline, with every live region relative to it.

    ``spans`` (by hunk id) are the regions the caller followed edit by edit, for the proposals
    in ``followed``. When those are all the file's live proposals, they are written as they
    are; otherwise the others are carried from the old baseline by a diff first.
    """
    # Ids only (as `Store.live_proposals` selects them): this runs at every region write of
    # an open document, and the full rows of a thousand proposals cost more than the rest.
    live = store.live_proposal_ids(workspace_id, path)
    if live <= followed:
        store.set_baseline(workspace_id, path, text, now)
    else:
        observe_file(store, workspace_id, path, text, (), now=now, via=via)
    if spans:
        store.update_regions(dict(spans))
