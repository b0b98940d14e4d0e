"""Settings from config.toml, overridden by environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from capture.edits.windows import (
    DEFAULT_LATE,
    DEFAULT_WINDOWS,
    LATE,
    Window,
    parse_duration,
    parse_windows,
)
from capture.errors import ConfigError
from capture.paths import Paths, resolve_paths

__all__ = ["Config", "load_config"]

#: Agent turns with no ids of their own fall into one episode while they come this close together.
DEFAULT_EPISODE_GAP = 300.0
#: The watcher stays this long after its last pending checkpoint: a commit of the agent's lines
#: soon after still reaches the late pass without a manual step.
DEFAULT_WATCHER_IDLE = 600.0


@dataclass(frozen=True, slots=True)
class Config:
    paths: Paths
    windows: tuple[Window, ...] = DEFAULT_WINDOWS
    late: Window = DEFAULT_LATE
    episode_gap: float = DEFAULT_EPISODE_GAP
    event_retention_days: float = 30.0
    #: the user's own test command patterns (regular expressions), see capture.testruns.commands
    test_commands: tuple[str, ...] = ()
    #: Globs (relative to the workspace) where JUnit XML reports appear; None: the defaults
    #: in capture.testruns.junit_files.
    junit_reports: tuple[str, ...] | None = None
    #: Whether `capture serve` watches its workspaces' report paths for JUnit reports.
    watch_reports: bool = True
    #: Whether the hook starts the watcher for terminal agents (`capture watch`) on demand.
    watcher: bool = True
    #: The watcher exits after nothing has been pending this long.
    watcher_idle: float = DEFAULT_WATCHER_IDLE

    @property
    def final_window(self) -> Window:
        return self.windows[-1]


def _read_toml(path: Path) -> dict[str, object]:
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    # imported only now: the hook path loads the config on every agent tool call, mostly with
    # no config file at all
    import tomllib

    with fh:
        try:
            return tomllib.load(fh)
        except (tomllib.TOMLDecodeError, OSError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc


def load_config(env: dict[str, str] | None = None) -> Config:
    env = dict(os.environ) if env is None else env
    paths = resolve_paths(env)
    table = _read_toml(paths.config_file)
    section = table.get("capture", table)
    if not isinstance(section, dict):
        raise ConfigError(f"{paths.config_file}: [capture] must be a table")
    windows = DEFAULT_WINDOWS
    if "windows" in section:
        value = section["windows"]
        windows = parse_windows(value if isinstance(value, str) else [str(v) for v in value])
    if env.get("CAPTURE_WINDOWS"):
        windows = parse_windows(env["CAPTURE_WINDOWS"])
    late = DEFAULT_LATE
    late_spec = env.get("CAPTURE_LATE") or section.get("late_window")
    if late_spec:
        late = Window(LATE, parse_duration(str(late_spec)))
    gap = DEFAULT_EPISODE_GAP
    if "episode_gap" in section:
        gap = parse_duration(str(section["episode_gap"]))
    retention = float(str(section.get("event_retention_days", 30)))
    junit: tuple[str, ...] | None = None
    junit_spec = env.get("CAPTURE_JUNIT_REPORTS") or section.get("junit_reports")
    if junit_spec:
        items = junit_spec.split(",") if isinstance(junit_spec, str) else junit_spec
        if not isinstance(items, list | tuple):
            raise ConfigError(f"{paths.config_file}: junit_reports must be a list of globs")
        junit = tuple(str(g).strip() for g in items if str(g).strip())
    watch = section.get("watch_junit_reports", True)
    if env.get("CAPTURE_WATCH_JUNIT_REPORTS"):
        watch = env["CAPTURE_WATCH_JUNIT_REPORTS"].strip().lower() not in ("0", "false", "no")
    if not isinstance(watch, bool):
        raise ConfigError(f"{paths.config_file}: watch_junit_reports must be true or false")
    watcher = section.get("watcher", True)
    if env.get("CAPTURE_WATCHER"):
        watcher = env["CAPTURE_WATCHER"].strip().lower() not in ("0", "false", "no", "off")
    if not isinstance(watcher, bool):
        raise ConfigError(f"{paths.config_file}: watcher must be true or false")
    idle_spec = env.get("CAPTURE_WATCHER_IDLE") or section.get("watcher_idle")
    idle = parse_duration(str(idle_spec)) if idle_spec else DEFAULT_WATCHER_IDLE
    return Config(
        paths=paths,
        windows=windows,
        late=late,
        episode_gap=gap,
        event_retention_days=retention,
        test_commands=_patterns(section.get("test_commands", []), paths.config_file),
        junit_reports=junit,
        watch_reports=watch,
        watcher=watcher,
        watcher_idle=idle,
    )


def _patterns(value: object, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: test_commands must be a list of regular expressions")
    import re

    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{path}: test_commands: {pattern!r}: {exc}") from None
    return tuple(value)
