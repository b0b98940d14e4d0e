"""Where agent-capture keeps its files: XDG directories, or everything under CAPTURE_HOME.

The directories themselves come from `capture.dirs` (with `os` alone, for the hook's fast lane);
this names the database, the config file and the log directory in them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from capture.dirs import capture_dirs

__all__ = ["Paths", "resolve_paths"]


@dataclass(frozen=True, slots=True)
class Paths:
    data_dir: Path
    config_dir: Path
    state_dir: Path

    @property
    def db(self) -> Path:
        return self.data_dir / "capture.db"

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "log"


def resolve_paths(env: dict[str, str] | None = None) -> Paths:
    """CAPTURE_HOME wins so that tests and scripts can isolate a whole installation."""
    data, config, state = capture_dirs(dict(os.environ) if env is None else env)
    return Paths(data_dir=Path(data), config_dir=Path(config), state_dir=Path(state))
