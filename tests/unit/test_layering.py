"""The core's layering, as `capture/__init__.py` and each package's docstring state it.

Read from the source (every import statement, those inside functions included), so a forbidden
import fails here before any process runs. Each failure names the file, the line and the rule.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("capture", "server", "sync")

#: The core's components, lowest first. A module may import its own component and the
#: components of lower layers; never a sibling in its own layer, never a higher layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("capture.errors", "capture.model", "capture.dirs", "capture.files", "capture.globs"),
    ("capture.edits", "capture.paths"),
    ("capture.config", "capture.testruns"),
    ("capture.store",),
    ("capture.recording",),
    ("capture.testruns.sources", "capture.install"),
    ("capture.hooks",),
    ("capture.importers", "capture.report"),
    ("capture.cli",),
    ("capture.__main__",),
)
LAYER = {component: i for i, layer in enumerate(LAYERS) for component in layer}

#: What `capture hook` imports before it returns to the agent. Their module-level imports,
#: followed through the project's own modules, may reach only these.
FAST_LANE = ("capture.cli", "capture.cli.hook_cmd", "capture.hooks.inbox")
FAST_LANE_MAY_LOAD = frozenset(
    {
        "__future__",
        "os",
        "sys",
        "time",
        "sqlite3",
        "capture",
        "capture.cli",
        "capture.cli.hook_cmd",
        "capture.dirs",
        "capture.hooks",
        "capture.hooks.inbox",
        "capture.hooks.payloads",
        "collections.abc",  # capture.dirs's Mapping: loaded by the interpreter at start-up
    }
)


def module_files() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = module_files()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.Module, *, module_level: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements; `module_level`: only those that run when the module is imported."""
    if not module_level:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node
        return
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                pending.extend([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            pending.extend([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                pending.extend(handler.body)
        elif isinstance(node, ast.With):
            pending.extend(node.body)


def imports_of(name: str, *, module_level: bool = False) -> list[tuple[int, str]]:
    """(line, module) for each module `name` imports: `from a import b` is `a.b` when that is a
    module of ours, else `a`."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in _import_nodes(tree, module_level=module_level):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            full = f"{base}.{alias.name}"
            found.append((node.lineno, full if full in MODULES else base))
    return found


def component_of(name: str) -> str | None:
    best = None
    for component in LAYER:
        if (name == component or name.startswith(component + ".")) and (
            best is None or len(component) > len(best)
        ):
            best = component
    return best


def _where(name: str, line: int) -> str:
    return f"{MODULES[name].relative_to(ROOT)}:{line}"


def layering_violations(edges: list[tuple[str, int, str]]) -> list[str]:
    """What breaks the layering in (importer, line, imported) edges, one line each."""
    problems = []
    for source, line, target in edges:
        top = target.split(".")[0]
        if top not in PACKAGES:
            continue
        src_top = source.split(".")[0]
        in_cli = source == "capture.__main__" or component_of(source) == "capture.cli"
        if top in ("server", "sync") and src_top != top and not in_cli:
            problems.append(f"{_where(source, line)} imports {target}: only the CLI may")
            continue
        if src_top != "capture" or top != "capture" or target == "capture":
            if target.startswith("capture.cli") and not in_cli:
                problems.append(f"{_where(source, line)} imports {target}: only the CLI may")
            continue
        mine, theirs = component_of(source), component_of(target)
        if mine is None or theirs is None or mine == theirs:
            continue
        if LAYER[theirs] >= LAYER[mine]:
            relation = "a sibling" if LAYER[theirs] == LAYER[mine] else "a higher layer"
            problems.append(
                f"{_where(source, line)} imports {target}: {mine} (layer {LAYER[mine]}) may not "
                f"import {theirs}, {relation} (layer {LAYER[theirs]})"
            )
    return problems


def all_edges() -> list[tuple[str, int, str]]:
    return [(name, line, target) for name in MODULES for line, target in imports_of(name)]


def test_every_core_module_has_a_place_in_the_layers() -> None:
    unplaced = [n for n in MODULES if n.startswith("capture.") and component_of(n) is None]
    assert unplaced == [], "add these to LAYERS (and to capture/__init__.py's map)"


def test_the_core_imports_only_downwards() -> None:
    problems = layering_violations(all_edges())
    assert not problems, "imports against the layering:\n" + "\n".join(problems)


def test_a_forbidden_import_is_named() -> None:
    # The rule itself, on edges as the source would give them: if this passes while a real
    # violation exists, the test above would not see it either.
    edges = [
        ("capture.edits.regions", 1, "capture.store.database"),
        ("capture.hooks.ingest", 2, "capture.cli.hook_cmd"),
        ("capture.store.database", 3, "sync.service"),
        ("capture.store.edit_rollups", 4, "capture.store.run_rollups"),
        ("capture.testruns.linking", 5, "capture.testruns.sources.wrapper"),
        ("capture.importers.aider", 6, "capture.report.figures"),
        ("capture.cli.serve_cmd", 7, "server.app"),
        ("capture.report.html", 8, "capture"),
    ]
    problems = layering_violations(edges)
    assert [p.split(" ")[0] for p in problems] == [
        "capture/edits/regions.py:1",
        "capture/hooks/ingest.py:2",
        "capture/store/database.py:3",
        "capture/testruns/linking.py:5",
        "capture/importers/aider.py:6",
    ]
    assert "may not import capture.store, a higher layer" in problems[0]
    assert "may not import capture.cli, a higher layer" in problems[1]
    assert "only the CLI may" in problems[2]
    assert "a sibling" in problems[4]


def test_the_two_rollup_modules_import_one_way() -> None:
    assert ("capture.store.edit_rollups", "capture.store.run_rollups") not in {
        (s, t) for s, _, t in all_edges()
    }


def _module_level_closure(start: tuple[str, ...]) -> dict[str, str]:
    """Every module reached from `start` by module-level imports, with who imported it first
    (imports of a package run its `__init__` too)."""
    reached: dict[str, str] = {name: "(start)" for name in start}
    queue = list(start)
    while queue:
        name = queue.pop(0)
        parts = name.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]
        for parent in parents:
            if parent in MODULES and parent not in reached:
                reached[parent] = name
                queue.append(parent)
        if name not in MODULES:
            continue
        for _, target in imports_of(name, module_level=True):
            if target not in reached:
                reached[target] = name
                if target in MODULES:
                    queue.append(target)
    return reached


def test_the_hook_fast_lane_loads_nothing_heavy() -> None:
    reached = _module_level_closure(FAST_LANE)
    extra = [f"{m} (imported by {by})" for m, by in reached.items() if m not in FAST_LANE_MAY_LOAD]
    assert not extra, "loaded on the path every agent tool call takes:\n" + "\n".join(extra)


def test_the_pytest_plugin_imports_nothing_at_module_level() -> None:
    # every pytest session of the user's imports it: the store is opened at the session's end
    reached = _module_level_closure(("capture.testruns.sources.pytest_plugin",))
    ours = sorted(m for m in reached if m.split(".")[0] in PACKAGES)
    assert ours == [
        "capture",
        "capture.testruns",
        "capture.testruns.sources",
        "capture.testruns.sources.pytest_plugin",
    ]


@pytest.mark.parametrize("package", ["capture", "server", "sync"])
def test_every_package_says_what_it_holds(package: str) -> None:
    missing = [
        str(path.relative_to(ROOT))
        for name, path in MODULES.items()
        if name.split(".")[0] == package
        and path.name == "__init__.py"
        and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert missing == []


#: What the pure decisions never touch: files, processes, clocks, the database, the network.
IMPURE = frozenset(
    {"os", "pathlib", "shutil", "tempfile", "sqlite3", "subprocess", "socket", "threading"}
    | {"asyncio", "time", "datetime", "select", "signal", "fcntl"}
)


def test_the_edit_decisions_are_pure() -> None:
    found = [
        f"{_where(name, line)} imports {target}"
        for name in MODULES
        if component_of(name) == "capture.edits"
        for line, target in imports_of(name)
        if target.split(".")[0] in IMPURE
    ]
    assert not found, "the edit decisions must not touch the world:\n" + "\n".join(found)
