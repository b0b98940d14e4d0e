"""Which files a live editor server holds: their checkpoints are the server's (it reads the
buffer, unsaved text included), and the watcher leaves them alone."""

from __future__ import annotations

from capture.store.database import Store
from capture.store.lease_rows import leased_elsewhere

__all__ = ["held_by_editor"]


def held_by_editor(store: Store, root: str, path: str, *, now: float) -> bool:
    """Whether a live process other than the watcher holds `path` of the workspace `root`
    through the document lease (`capture.store.lease_rows`). Where nobody holds it, the watcher
    follows the file; where a server follows the same file too, the first measure of a
    checkpoint stands (a checkpoint is recorded once)."""
    workspace_id = store.workspace_id(root)
    if workspace_id is None:
        return False
    return (workspace_id, path) in leased_elsewhere(store.conn, None, now)
