"""Another commit's code, loaded in this process beside this tree's, for benchmarks whose peer is
the code before a change ("by its commit"): measured in the same process, on the same data, in
alternating rounds, so that the machine's load weighs on both alike.

`load_commit` exports the packages of a commit (`git archive`) into a directory and imports them
there; `CodeTree.active()` then makes one tree's modules the ones `sys.modules` holds, so that
what its code imports on first use (lazily) comes from the same tree.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

__all__ = ["PACKAGES", "CodeTree", "load_commit", "this_tree"]

ROOT = Path(__file__).resolve().parents[2]
#: The packages swapped: sync's code and the core it imports.
PACKAGES = ("capture", "sync")


def _ours(name: str) -> bool:
    return name.split(".", 1)[0] in PACKAGES


def _take() -> dict[str, ModuleType]:
    """Remove the packages' modules from `sys.modules`, and give them."""
    return {name: sys.modules.pop(name) for name in [n for n in sys.modules if _ours(n)]}


class CodeTree:
    """One version of the packages, imported."""

    def __init__(self, name: str, modules: dict[str, ModuleType]) -> None:
        self.name = name
        self.modules = modules

    @contextmanager
    def active(self) -> Iterator[None]:
        others = _take()
        sys.modules.update(self.modules)
        try:
            yield
        finally:
            # Kept with the tree: what its code imported on first use.
            self.modules.update(_take())
            sys.modules.update(others)

    def module(self, name: str) -> ModuleType:
        with self.active():
            return importlib.import_module(name)


def this_tree(*names: str) -> CodeTree:
    """This tree's packages, with `names` imported."""
    for name in names:
        importlib.import_module(name)
    return CodeTree("this tree", {n: m for n, m in sys.modules.items() if _ours(n)})


def load_commit(commit: str, into: Path, *names: str) -> CodeTree:
    """The packages as they were at `commit`, exported into `into`, with `names` imported."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit, *PACKAGES],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    others = _take()
    sys.path.insert(0, str(into))
    try:
        importlib.invalidate_caches()
        for name in names:
            module = importlib.import_module(name)
            assert Path(module.__file__ or "").is_relative_to(into), module
        return CodeTree(commit, {n: m for n, m in sys.modules.items() if _ours(n)})
    finally:
        sys.path.remove(str(into))
        _take()
        sys.modules.update(others)
