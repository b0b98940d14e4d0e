"""The canonical export: one line per episode, every signal the store holds for it.

It is the store's episode JSON (`agent-capture/episode@1`, the README's "Episode schema"), at
the export's level, with what an export adds: `tier` and `tier_history` for the episode and for
each proposal, each hunk's `hunk_context` (the file around it, the region's text now and its
lines), and `split`. `episode.schema.json`, shipped beside this module, documents the line.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["EXPORT_SCHEMA", "episode_row", "json_schema"]

EXPORT_SCHEMA = "agent-capture/export-episode@1"


def episode_row(episode: dict[str, Any], split: str | None) -> dict[str, Any]:
    row = dict(episode)
    row["export_schema"] = EXPORT_SCHEMA
    row["split"] = split
    return row


@cache
def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one canonical line."""
    text = resources.files("capture.export").joinpath("episode.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
