"""Which workspace a file belongs to (run off the event loop: it looks at the disk).

The hook commands name a file's workspace by its enclosing git work tree, so the server does
the same: proposals of one file then share one workspace and one baseline, whichever process
recorded them. Outside a git work tree, the editor's workspace folder holding the file is the
root, else the file's directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from capture.files import find_workspace

__all__ = ["resolve", "workspace_root"]


def resolve(path: str) -> str:
    """The absolute path with symlinks resolved, as the hook commands record it."""
    return os.path.realpath(path)


def workspace_root(path: str, folders: Sequence[str]) -> str:
    resolved = [resolve(folder) for folder in folders]
    containing = [f for f in resolved if path == f or path.startswith(f.rstrip(os.sep) + os.sep)]
    fallback = Path(max(containing, key=len)) if containing else Path(path).parent
    return str(find_workspace(Path(path), fallback))
