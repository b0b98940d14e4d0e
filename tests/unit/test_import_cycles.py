"""No import circles: neither between a package's modules nor between packages.

Read from the source: the imports that run when a module is imported (not those inside
functions, nor under `if TYPE_CHECKING:`), followed through the project's own modules
(`capture`, `server`, `sync`). Two graphs are checked:

- modules: `a` imports `b`;
- packages: a module of package `p` imports a module of package `q`. A package is a folder's
  own modules (its `__init__` included, its subpackages not); the modules directly in a
  top-level package (`capture/config.py`, `server/app.py`, `sync/outbox.py`) each stand for
  themselves, as the layering map has them: the top level is the project's namespace.

A failure prints each circle as the chain of imports that closes it, file and line each.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support.source_tree import MODULES, PACKAGES, ROOT, run_at_import

#: (importer, line, imported)
Edge = tuple[str, int, str]


def _ours(name: str, modules: dict[str, Path] | set[str]) -> str | None:
    """The module of ours that importing `name` runs last: `name` itself, or the nearest
    package above it (`from capture.store import Store` runs `capture/store/__init__.py`)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_at_import(
    source: str, name: str, modules: dict[str, Path] | set[str], *, is_package: bool = False
) -> list[tuple[int, str]]:
    """(line, module of ours) for each import that runs when module `name` is imported: `from
    a import b` is `a.b` when that is a module of ours, else `a`; relative imports resolved."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in run_at_import(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            ]
        for target in targets:
            module = _ours(target, modules)
            if module is not None and module != name:
                found.append((node.lineno, module))
    return found


def module_edges() -> list[Edge]:
    return [
        (name, line, target)
        for name, path in MODULES.items()
        for line, target in imports_at_import(
            path.read_text(), name, MODULES, is_package=path.name == "__init__.py"
        )
    ]


def package_of(name: str, modules: dict[str, Path]) -> str:
    """The package node a module belongs to (see the module docstring)."""
    package = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]
    return name if package in PACKAGES else package


def circles(edges: list[Edge]) -> list[list[Edge]]:
    """One circle per strongly connected group of nodes, as the edges that close it."""
    graph: dict[str, dict[str, int]] = {}
    for source, line, target in edges:
        if source != target:
            graph.setdefault(source, {}).setdefault(target, line)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        # Tarjan's algorithm, iterative: the project's import chains are deep.
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, {})))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return [_closing_chain(graph, group) for group in groups]


def _closing_chain(graph: dict[str, dict[str, int]], group: set[str]) -> list[Edge]:
    """The shortest chain of edges inside `group` from its first node back to it."""
    first = min(group)
    came_from: dict[str, str] = {}
    frontier = [first]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph.get(node, {})):
                if succ not in group or succ in came_from:
                    continue
                came_from[succ] = node
                following.append(succ)
        if first in came_from:
            break
        frontier = following
    chain: list[Edge] = []
    node = first
    while True:
        before = came_from[node]
        chain.append((before, graph[before][node], node))
        node = before
        if node == first:
            return chain[::-1]


def _describe(chain: list[Edge], where: dict[tuple[str, str], str]) -> str:
    names = " -> ".join([chain[0][0], *(target for _, _, target in chain)])
    steps = "\n".join(f"    {where[(s, t)]}: {s} imports {t}" for s, _, t in chain)
    return f"{names}\n{steps}"


def _location(name: str, line: int) -> str:
    path = MODULES.get(name)
    return f"{path.relative_to(ROOT) if path else name}:{line}"


def test_the_scan_sees_the_project() -> None:
    edges = {(s, t) for s, _, t in module_edges()}
    # imports that are there: if the scan missed them, the checks below would pass vacuously
    assert ("server.main", "server.app") in edges
    assert ("server.proposals", "server.documents") in edges
    assert ("sync.collector.storage", "sync.collector.backend") in edges
    assert ("sync.collector.app", "sync.collector.episode_routes") in edges
    assert ("capture.store.run_rollups", "capture.store.proposal_rollups") in edges
    assert package_of("capture.store.database", MODULES) == "capture.store"
    assert package_of("capture.store", MODULES) == "capture.store"
    assert package_of("capture.config", MODULES) == "capture.config"
    assert package_of("server.app", MODULES) == "server.app"


def test_what_runs_at_import_is_read() -> None:
    modules = {"capture", "capture.a", "capture.b", "capture.c", "capture.d", "capture.e"}
    source = (
        "import capture.a\n"
        "from . import b\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from capture.c import C\n"
        "else:\n"
        "    from capture.d import D\n"
        "def f():\n"
        "    from capture.e import E\n"
        "from capture.x import y\n"
    )
    assert sorted(imports_at_import(source, "capture.z", modules)) == [
        (1, "capture.a"),
        (2, "capture.b"),
        (7, "capture.d"),
        (10, "capture"),
    ]


def test_a_circle_is_found_and_named() -> None:
    edges = [
        ("p.a", 1, "p.b"),
        ("p.b", 2, "p.c"),
        ("p.c", 3, "p.a"),
        ("p.c", 4, "p.d"),
        ("p.d", 5, "p.e"),
        ("p.e", 6, "p.d"),
        ("p.f", 7, "p.a"),
    ]
    found = circles(edges)
    assert sorted(found) == [
        [("p.a", 1, "p.b"), ("p.b", 2, "p.c"), ("p.c", 3, "p.a")],
        [("p.d", 5, "p.e"), ("p.e", 6, "p.d")],
    ]
    assert circles([e for e in edges if e[1] not in (3, 6)]) == []


def test_no_circle_between_modules() -> None:
    edges = module_edges()
    where = {(s, t): _location(s, line) for s, line, t in reversed(edges)}
    found = [_describe(chain, where) for chain in circles(edges)]
    assert not found, "import circles between modules:\n" + "\n".join(found)


def test_no_circle_between_packages() -> None:
    edges = []
    where: dict[tuple[str, str], str] = {}
    for source, line, target in module_edges():
        mine, theirs = package_of(source, MODULES), package_of(target, MODULES)
        if mine != theirs:
            edges.append((mine, line, theirs))
            where.setdefault((mine, theirs), f"{_location(source, line)} ({source} -> {target})")
    found = [_describe(chain, where) for chain in circles(edges)]
    assert not found, "import circles between packages:\n" + "\n".join(found)
