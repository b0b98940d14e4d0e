"""Where agent-capture's three directories are (data, config, state), computed with `os` alone:
the hook's fast lane cannot afford the imports of `capture.paths` (dataclasses, pathlib) on every
agent tool call. `capture.paths` names the files in them; `capture.files` reads the files that
agents edit."""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["capture_dirs"]


def _xdg(env: Mapping[str, str], var: str, fallback: str) -> str:
    value = env.get(var)
    if value and os.path.isabs(value):
        return value
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), fallback)


def capture_dirs(env: Mapping[str, str]) -> tuple[str, str, str]:
    """(data, config, state) directories: everything under CAPTURE_HOME when set, else XDG."""
    home = env.get("CAPTURE_HOME")
    if home:
        root = os.path.expanduser(home)
        return (
            os.path.join(root, "data"),
            os.path.join(root, "config"),
            os.path.join(root, "state"),
        )
    return (
        os.path.join(_xdg(env, "XDG_DATA_HOME", ".local/share"), "capture"),
        os.path.join(_xdg(env, "XDG_CONFIG_HOME", ".config"), "capture"),
        os.path.join(_xdg(env, "XDG_STATE_HOME", ".local/state"), "capture"),
    )
