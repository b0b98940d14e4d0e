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
from typing import Any

from pygls.uris import to_fs_path

from capture.files import find_workspace
from server.params import ParamsError
from server.surrogates import has_surrogates

__all__ = [
    "changed_folders",
    "contains",
    "folder_paths",
    "inside",
    "inside_resolved",
    "resolve",
    "workspace_root",
]


def resolve(path: str) -> str:
    """The absolute path with symlinks resolved, as the hook commands record it."""
    return os.path.realpath(path)


def folder_paths(folders: Sequence[str]) -> list[str]:
    """The editor's workspace folders (URIs or paths) as absolute, normalized paths."""
    paths = []
    for folder in folders:
        path = to_fs_path(folder) if folder.startswith("file:") else folder
        # A lone surrogate names no folder the OS could open: such a folder is left out.
        if path and os.path.isabs(path) and not has_surrogates(path):
            paths.append(os.path.normpath(path))
    return paths


def _uris(items: Any) -> list[str]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise ParamsError("added and removed must be lists")
    uris = []
    for item in items:
        uri = item.get("uri") if isinstance(item, dict) else None
        if not isinstance(uri, str) or len(uri) > 4096:
            raise ParamsError("each workspace folder needs a uri string")
        uris.append(uri)
    return uris


def changed_folders(folders: Sequence[str], params: Any) -> list[str]:
    """The folders after a ``workspace/didChangeWorkspaceFolders`` notification."""
    event = params.get("event") if isinstance(params, dict) else None
    if not isinstance(event, dict):
        raise ParamsError("params.event must be an object")
    removed = set(folder_paths(_uris(event.get("removed"))))
    added = folder_paths(_uris(event.get("added")))
    kept = [f for f in folders if f not in removed]
    return kept + [f for f in added if f not in kept]


def contains(folder: str, path: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it (both absolute and normalized)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def inside(path: str, folders: Sequence[str]) -> bool:
    """Whether ``path`` lies in one of the workspace ``folders``, judged by the names alone
    (``..`` folded, no disk access: cheap enough for the event loop). The writer thread
    checks again with symlinks resolved, see :func:`inside_resolved`."""
    if not os.path.isabs(path):
        return False
    path = os.path.normpath(path)
    return any(contains(os.path.normpath(f), path) for f in folders if os.path.isabs(f))


def inside_resolved(path: str, folders: Sequence[str]) -> bool:
    """:func:`inside`, with symlinks resolved on both sides (it looks at the disk)."""
    real = resolve(path)
    return any(contains(resolve(f), real) for f in folders if os.path.isabs(f))


def workspace_root(path: str, folders: Sequence[str]) -> str:
    resolved = [resolve(folder) for folder in folders]
    containing = [f for f in resolved if contains(f, path)]
    fallback = Path(max(containing, key=len)) if containing else Path(path).parent
    return str(find_workspace(Path(path), fallback))
