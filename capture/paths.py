"""Where agent-capture keeps its files: XDG directories, or everything under CAPTURE_HOME."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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


def _xdg(env: dict[str, str], var: str, fallback: str) -> Path:
    value = env.get(var)
    if value and os.path.isabs(value):
        return Path(value)
    return Path(env.get("HOME") or Path.home()) / fallback


def resolve_paths(env: dict[str, str] | None = None) -> Paths:
    """CAPTURE_HOME wins so that tests and scripts can isolate a whole installation."""
    env = dict(os.environ) if env is None else env
    home = env.get("CAPTURE_HOME")
    if home:
        root = Path(home).expanduser()
        return Paths(data_dir=root / "data", config_dir=root / "config", state_dir=root / "state")
    return Paths(
        data_dir=_xdg(env, "XDG_DATA_HOME", ".local/share") / "capture",
        config_dir=_xdg(env, "XDG_CONFIG_HOME", ".config") / "capture",
        state_dir=_xdg(env, "XDG_STATE_HOME", ".local/state") / "capture",
    )
