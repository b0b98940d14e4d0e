"""mkdocs hook: the parts of the manual written from the code at build time.

A page asks for one with a line holding only `<!-- generated: NAME -->`; the build fails on a
name it does not know, so a page cannot silently lose its generated part. What this tree's
code says is what is documented: the repository's root goes first on `sys.path`, ahead of
any installed copy of `capture`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# Siblings, imported now: mkdocs puts this folder on sys.path only while it loads the hook.
from cli_reference import cli_markdown  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402

__all__ = ["GENERATORS", "episode_schema", "layer_map", "on_page_markdown"]

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


def episode_schema() -> str:
    """The episode schema page, rendered from the episode contract (`capture/episode/`): the
    same types `episodes --json`, the export's JSON Schema and the collector's validation use."""
    from capture.episode.reference import schema_markdown

    return schema_markdown()


def layer_map() -> str:
    """The core's layer map as `capture/__init__.py` states it (the layering test holds the
    code to that docstring)."""
    import capture

    doc = capture.__doc__ or ""
    block = [line[4:] for line in doc.splitlines() if line.startswith("    ")]
    if not block:
        raise PluginError("capture/__init__.py's docstring holds no indented layer map")
    return "\n".join(["```text", *block, "```"])


GENERATORS: dict[str, Callable[[], str]] = {
    "cli-reference": cli_markdown,
    "episode-schema": episode_schema,
    "layer-map": layer_map,
}


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise PluginError(f"{page.file.src_path}: no generator named {name!r}")
        return GENERATORS[name]()

    return MARKER.sub(generated, markdown)
