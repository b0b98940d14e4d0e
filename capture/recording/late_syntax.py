"""Syntax errors in a file's text, counted with tree-sitter and the grammars PyPI ships.

Python, JavaScript and TypeScript (TSX included) have a grammar here; any other file has no
count (None), which the tier rules read as "unknown", never as "clean". Parsers are built once
per language and process.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = ["LANGUAGES", "syntax_errors"]

#: file suffix -> (grammar module, its function returning the language)
LANGUAGES: dict[str, tuple[str, str]] = {
    ".py": ("tree_sitter_python", "language"),
    ".pyi": ("tree_sitter_python", "language"),
    ".js": ("tree_sitter_javascript", "language"),
    ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"),
    ".jsx": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".mts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
}


@cache
def _parser(suffix: str) -> Any | None:
    spec = LANGUAGES.get(suffix)
    if spec is None:
        return None
    try:
        import importlib

        import tree_sitter

        grammar = importlib.import_module(spec[0])
        return tree_sitter.Parser(tree_sitter.Language(getattr(grammar, spec[1])()))
    except (ImportError, AttributeError, ValueError):
        return None


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind(".") :].lower() if "." in name else ""


def syntax_errors(path: str, text: str | None) -> int | None:
    """How many ERROR and MISSING nodes the file's parse tree holds (None: no grammar here)."""
    parser = _parser(_suffix(path))
    if parser is None:
        return None
    if not text:
        return 0
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    if not tree.root_node.has_error:
        return 0
    count = 0
    cursor = tree.walk()
    # Depth-first over the whole tree, without recursion (deep trees exist).
    while True:
        node = cursor.node
        if node is not None and (node.is_error or node.is_missing):
            count += 1
        if node is not None and node.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return count
