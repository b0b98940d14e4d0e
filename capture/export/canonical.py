"""The canonical export: one line per episode, every signal the store holds for it.

It is the store's episode JSON (`agent-capture/episode@1`), at the export's level, with what an
export adds: `tier` and `tier_history` for the episode and for each proposal, each hunk's
`hunk_context` (the file around it, the region's text now and its lines), and `split`. The
episode contract defines the line (`capture.episode.variants.export_episode`);
`episode.schema.json`, shipped beside this module, is its JSON Schema, written from the
contract by `python -m capture.export.write_schema` (a test holds the file to it).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from capture.episode.schemas import export_schema
from capture.episode.vocabulary import EXPORT_SCHEMA

__all__ = ["EXPORT_SCHEMA", "SHIPPED_SCHEMA", "episode_row", "json_schema", "schema_text"]

#: The schema file shipped in the package, beside this module.
SHIPPED_SCHEMA = Path(__file__).with_name("episode.schema.json")


def episode_row(episode: dict[str, Any], split: str | None) -> dict[str, Any]:
    row = dict(episode)
    row["export_schema"] = EXPORT_SCHEMA
    row["split"] = split
    return row


@cache
def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one canonical line, from the episode contract."""
    return export_schema()


def schema_text() -> str:
    """The shipped file's text: the schema, indented, with a final newline."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
