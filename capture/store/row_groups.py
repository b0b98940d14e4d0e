"""What each group of `Store`'s row methods counts on from the rest of `Store`.

`Store` is put together from one mixin per kind of row (`proposal_rows`, `checkpoint_rows`,
`run_rows`) so that no module holds every write. A mixin reaches the connection, the write
transaction and a few methods of other groups through `self`; this base declares them (for
mypy only: at run time `Store` and its other mixins provide them), so each mixin is checked on
its own.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

__all__ = ["RowGroup"]


class RowGroup:
    """The base of `Store`'s mixins: the attributes and methods they call across groups."""

    conn: sqlite3.Connection
    path: Path

    if TYPE_CHECKING:
        # Provided by `Store` (capture.store.database).

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def ensure_workspace(self, root: str, now: float) -> int: ...

        def ensure_episode(
            self,
            *,
            workspace_id: int,
            agent: str,
            now: float,
            gap: float,
            session_id: str | None = None,
            turn_id: str | None = None,
            model: str | None = None,
            prompt: str | None = None,
            source: str | None = None,
        ) -> str: ...

        # Provided by `CheckpointRows` (capture.store.checkpoint_rows).

        def _settle_episode_if_done(self, episode_id: str, now: float) -> None: ...
