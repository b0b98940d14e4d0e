"""The proposal the server follows in memory, shared by the feature and its writer-thread jobs.

Its own module because both sides hold the same object: the event loop moves its regions,
the writer thread fills in its store fields once it is recorded.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from server.document import Document
from server.stored import StoredProposal

__all__ = ["LiveProposal"]


@dataclass(eq=False, slots=True)
class LiveProposal:
    """A proposal being followed. One the editor just reported is followed at once, before
    the writer thread recorded it: until then its store fields are None, and the writer thread
    fills them in (before later jobs, which may read them, run).

    It holds no hunk texts or contexts: the store has them, and what follows a region in a
    document is its key in the document's index (a thousand live proposals would otherwise
    keep their texts and six lines of context each in memory, for nothing read)."""

    proposal_id: str | None = None
    workspace_id: int | None = None
    root: str | None = None
    path: str | None = None
    file: str | None = None
    hunk_ids: list[int] = field(default_factory=list)
    due: list[float] = field(default_factory=list)
    keys: list[int | None] = field(default_factory=list)  # RegionIndex keys while in a doc
    doc: Document | None = None

    def fill(self, stored: StoredProposal) -> None:
        self.proposal_id = stored.proposal_id
        self.workspace_id = stored.workspace_id
        # Every proposal of a file would otherwise hold its own copies of the same names.
        self.root = sys.intern(stored.root)
        self.path = sys.intern(stored.path)
        self.file = sys.intern(stored.file)
        self.hunk_ids = [hid for hid, _ in stored.hunks]
        self.due = sorted(stored.due)
