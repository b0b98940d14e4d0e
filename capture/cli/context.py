"""What every subcommand needs: the configuration, the store, and the time."""

from __future__ import annotations

import time
from functools import cached_property

from capture.config import Config, load_config
from capture.store import Store

__all__ = ["Context"]


class Context:
    @cached_property
    def config(self) -> Config:
        return load_config()

    @cached_property
    def store(self) -> Store:
        return Store.open(self.config.paths.db)

    @staticmethod
    def now() -> float:
        return time.time()
