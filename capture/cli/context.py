"""What every subcommand needs: the configuration, the store, and the time."""

from __future__ import annotations

import time
from functools import cached_property

from capture.config import Config, load_config
from capture.store.database import Store

__all__ = ["Context"]


class Context:
    @cached_property
    def config(self) -> Config:
        return load_config()

    @cached_property
    def store(self) -> Store:
        store = Store.open(self.config.paths.db)
        # Hook payloads still queued by the fast lane are applied first, so that what a
        # command reads includes every hook call that already returned to its agent.
        from capture.hooks.queue import drain, queued

        if queued(store):
            drain(store, self.config)
        return store

    def settle(self) -> None:
        """Evaluate what is due before a reading command answers (`report`, `show`, `episodes`,
        `export`): a checkpoint the watcher's recorded changes cover is rebuilt from them, the
        rest are measured now and marked late."""
        import contextlib
        import os

        if os.environ.get("CAPTURE_SETTLE", "").strip().lower() in ("0", "off", "false", "no"):
            return  # a database read as it is (a copy from another machine, a fixture)
        from capture.connection import sqlite3
        from capture.recording.observer import observe_due

        # a read-only or busy database: the command answers with what it holds
        with contextlib.suppress(sqlite3.OperationalError):
            observe_due(self.store, self.config, now=self.now())

    @staticmethod
    def now() -> float:
        return time.time()
