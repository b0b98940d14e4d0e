"""Hints from the hook to the watcher: the files an edit being recorded names, left in the
state directory before the edit is applied, so that the watcher follows them from the moment
it reads the hint rather than from when the edit's checkpoints appear in the store."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["HINTS_DIR", "leave_hint", "take_hints"]

HINTS_DIR = "watch-hints"


def leave_hint(state_dir: Path, paths: Sequence[str]) -> None:
    """One small file per edit (written whole, then renamed into place)."""
    folder = state_dir / HINTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns()}-{os.getpid()}"
    temporary = folder / f".{name}"
    temporary.write_text("\n".join(os.path.abspath(p) for p in paths), encoding="utf-8")
    os.replace(temporary, folder / name)


def take_hints(state_dir: Path) -> list[str]:
    """The hinted paths, each hint file removed once read."""
    folder = state_dir / HINTS_DIR
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except OSError:
        return []
    found: list[str] = []
    for name in names:
        path = folder / name
        try:
            found += [line for line in path.read_text(encoding="utf-8").splitlines() if line]
            path.unlink()
        except (OSError, UnicodeDecodeError):
            continue
    return found
