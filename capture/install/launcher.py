"""The per-user `capture` launcher: a small script on a stable path (`~/.local/bin/capture`)
that runs capture with the interpreter it was installed with. Agent settings a team commits name
only `capture hook <agent>`; each machine's launcher (or its own installed `capture`) answers
that name, so no virtual environment's absolute path ends up in a repository.

Plain functions over text and mappings; `capture.cli.install_cmd` writes the file."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

__all__ = ["MARKER", "is_launcher", "launcher_dir", "launcher_text"]

#: The line that tells a launcher capture wrote from a `capture` the user installed some other way.
MARKER = "# agent-capture launcher"


def launcher_dir(env: Mapping[str, str]) -> str:
    """CAPTURE_BIN_DIR when set, else XDG_BIN_HOME, else ~/.local/bin (where pipx and uv put
    their commands, on PATH in most shells)."""
    for var in ("CAPTURE_BIN_DIR", "XDG_BIN_HOME"):
        value = env.get(var)
        if value and os.path.isabs(os.path.expanduser(value)):
            return os.path.expanduser(value)
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".local", "bin")


def launcher_text(python: str, import_root: str | None) -> str:
    """A POSIX shell launcher running `python -m capture`; `import_root`, when the package is not
    importable by that interpreter on its own (a clone, a bundled libs folder), goes first on
    PYTHONPATH."""
    lines = ["#!/bin/sh", MARKER, "# Rewritten by `capture install`; safe to delete."]
    if import_root is not None:
        root = shlex.quote(import_root)
        lines.append(f'PYTHONPATH={root}"${{PYTHONPATH:+:$PYTHONPATH}}"')
        lines.append("export PYTHONPATH")
    # -P: a project folder named `capture` in the working directory must not shadow the package
    lines.append(f'exec {shlex.quote(python)} -P -m capture "$@"')
    return "\n".join(lines) + "\n"


def is_launcher(text: str) -> bool:
    """A file capture wrote (and may rewrite), not a `capture` the user installed."""
    return MARKER in text.splitlines()[:3]
