"""``workspace/executeCommand capture.stats``: today's figures, for a status bar."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from capture.model import Outcome
from capture.store.database import Store
from capture.store.report_queries import today_counts
from server.documents import Documents
from server.feature import CommandHandler, Context, Feature
from server.proposals import Proposals
from server.watcher import DiskWatcher

__all__ = ["STATS_COMMAND", "Stats"]

STATS_COMMAND = "capture.stats"


def _midnight(now: float) -> float:
    day = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return day.timestamp()


def _today(since: float, now: float, store: Store) -> dict[str, Any]:
    outcomes = {o.value: 0 for o in Outcome}
    counted, runs = today_counts(store.conn, since)
    outcomes.update(counted)
    # The personal report's figures for today, the same as `capture report --today --json`.
    from capture.report import today_stats

    return {
        "outcomes": outcomes,
        "runs": runs,
        "report": today_stats(store, now),
    }


class Stats(Feature):
    def __init__(
        self,
        context: Context,
        documents: Documents,
        proposals: Proposals,
        watcher: DiskWatcher,
        diagnostics: Callable[[], dict[str, Any]],
    ) -> None:
        super().__init__(context)
        self.documents = documents
        self.proposals = proposals
        self.watcher = watcher
        self._server_figures = diagnostics
        self._query: asyncio.Future[dict[str, Any]] | None = None

    def commands(self) -> dict[str, CommandHandler]:
        return {STATS_COMMAND: self.stats}

    async def stats(self, *args) -> dict[str, Any]:
        # pygls inspects a command's signature to convert its arguments: none are taken.
        now = time.time()
        since = _midnight(now)
        # A status bar may ask faster than the store answers: requests arriving while a query
        # is queued share it, so a burst of them costs one query, not a backlog.
        if self._query is None or self._query.done():
            self._query = self.context.writer.submit(partial(_today, since, now), "capture.stats")
        today = await asyncio.shield(self._query)
        outcomes = today["outcomes"]
        settled = sum(outcomes[o] for o in ("kept", "edited", "undone", "rejected", "lost"))
        passed, failed = today["runs"][1], today["runs"][2]
        proposals = self.proposals
        return {
            "date": datetime.fromtimestamp(since).date().isoformat(),
            "proposals": sum(outcomes.values()),
            "outcomes": outcomes,
            "keptRate": round(outcomes["kept"] / settled, 4) if settled else None,
            "testRuns": {"total": today["runs"][0], "passed": passed, "failed": failed},
            "tracking": {
                "live": len(proposals.live),
                "inEditor": sum(1 for p in proposals.live.values() if p.doc is not None),
                "onDisk": sum(1 for p in proposals.live.values() if p.doc is None),
                "openDocuments": len(self.documents.by_uri),
                "watchedDirectories": len(self.watcher.directories),
            },
            "server": self._server_figures(),
            "report": today["report"],
            "line": today["report"]["line"],
        }
