"""Which files a live editor server holds: their checkpoints are the server's (it reads the
buffer, unsaved text included), and the watcher leaves them alone."""

from __future__ import annotations

from capture.store.database import Store

__all__ = ["held_by_editor"]


def held_by_editor(store: Store, root: str, path: str, *, now: float) -> bool:
    """Whether a live `capture serve` holds `path` of the workspace `root`.

    The one place the watcher asks it. The store records no editor's hold on a document yet,
    so the answer is no: the watcher follows every pending file, and where a server follows the
    same file, the first measure of a checkpoint stands (a checkpoint is recorded once). The
    document-ownership lease answers it here once the store has one."""
    del store, root, path, now
    return False
