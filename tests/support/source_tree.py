"""The project's own modules read as source, for the tests that hold the code to its map (the
layering, SQL only in the stores, no import circles)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MODULES", "PACKAGES", "ROOT", "module_files", "run_at_import"]

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("capture", "server", "sync")


def module_files() -> dict[str, Path]:
    """Each module of ours by its dotted name (a package by its `__init__.py`)."""
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


def run_at_import(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node that runs when the module is imported: all but function bodies (their
    decorators and defaults do run) and the body of `if TYPE_CHECKING:` (its `else` runs)."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            pending.extend(getattr(node, "decorator_list", []))
            pending.extend(node.args.defaults + [d for d in node.args.kw_defaults if d])
            continue
        if isinstance(node, ast.If) and _is_type_checking(node):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
