"""The episode schema page's tables, read from the JSON Schema the export ships
(`capture/export/episode.schema.json`): one table for the episode line, one per definition it
refers to, each field with its type, whether it is required, and its description."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["schema_markdown"]


def _anchor(name: str) -> str:
    """The id of a definition's section (prefixed: the page's own headings keep theirs)."""
    return "schema-" + re.sub(r"[^a-z0-9]+", "-", name.lower())


def _cell(text: str) -> str:
    """Text for a table cell: pipes escaped, the rest left as Markdown."""
    return text.replace("|", "\\|").replace("\n", " ")


def _literal(value: Any) -> str:
    return "`null`" if value is None else f"`{json.dumps(value)}`"


def _type(spec: dict[str, Any]) -> str:
    """What a field holds, in words, with a link to the definition it names."""
    if "$ref" in spec:
        name = spec["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    if "const" in spec:
        return _literal(spec["const"])
    if "enum" in spec:
        return "one of " + ", ".join(_literal(value) for value in spec["enum"])
    types = spec.get("type")
    names = types if isinstance(types, list) else [types] if types else []
    words = []
    for name in names:
        if name == "array" and "items" in spec:
            words.append("array of " + _type(spec["items"]))
        else:
            words.append(str(name))
    text = " or ".join(words) or "any"
    if "minimum" in spec:
        text += f" ≥ {spec['minimum']}"
    if "maximum" in spec:
        text += f" ≤ {spec['maximum']}"
    return text


def _table(spec: dict[str, Any]) -> list[str]:
    required = set(spec.get("required", ()))
    rows = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, field in spec.get("properties", {}).items():
        rows.append(
            f"| `{name}` | {_cell(_type(field))} | {'yes' if name in required else ''} "
            f"| {_cell(field.get('description', ''))} |"
        )
    return rows


def _about(spec: dict[str, Any]) -> list[str]:
    lines = []
    if spec.get("description"):
        lines += [spec["description"], ""]
    if "type" in spec and "properties" not in spec:
        lines += [f"Type: {_type(spec)}.", ""]
    return lines


def schema_markdown(path: Path) -> str:
    """The schema at `path` as Markdown tables, the top level first, then each definition."""
    schema = json.loads(path.read_text(encoding="utf-8"))
    lines = [f"### The episode line (`{schema.get('$id', '')}`)", ""]
    lines += _about(schema) + _table(schema) + [""]
    for name, spec in schema.get("$defs", {}).items():
        lines += [f"### `{name}` {{ #{_anchor(name)} }}", ""]
        lines += _about(spec)
        if "properties" in spec:
            lines += _table(spec) + [""]
    return "\n".join(lines)
