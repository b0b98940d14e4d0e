"""Which workspace a hook call is about: the roots a payload or the agent's environment names,
the git work tree around the agent's directory, and the root holding a given path."""

from __future__ import annotations

import os
from pathlib import Path

from capture.files import find_workspace, relative_to_workspace
from capture.hooks.agents.facts import Call

__all__ = ["candidate_roots", "real", "root_containing"]


def real(path: str) -> str:
    return os.path.realpath(path)


def candidate_roots(call: Call, fallback_cwd: str | None = None) -> list[str]:
    """Workspace roots for this call, most trusted first: what the payload or the agent's
    environment names as the project, the git work tree around the agent's cwd, the cwd."""
    roots = [real(r) for r in call.roots if r]
    cwd = call.cwd or (None if roots else fallback_cwd)
    if cwd:
        cwd = real(cwd)
        roots.append(str(find_workspace(Path(cwd), Path(cwd))))
        roots.append(cwd)
    return list(dict.fromkeys(roots))


def root_containing(path: str, roots: list[str]) -> str | None:
    for root in roots:
        if relative_to_workspace(Path(path), Path(root)) is not None:
            return root
    return None
