"""The JSON Schemas of the episode's shapes, generated from the contract by msgspec.

`export_schema()` is the schema shipped beside the canonical export (`capture/export/
episode.schema.json`, written from it; a test holds the file to it). `upload_schema()` is what
the collector validates uploads with and publishes in its OpenAPI description: the same
schema, its references and `anyOf` alternatives written out (`inline`) into the plain subset
of JSON Schema the collector's compiled validator reads.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import msgspec

from capture.episode.model import Episode
from capture.episode.variants import export_episode, upload_batch, upload_episode
from capture.episode.vocabulary import EPISODE_SCHEMA, EXPORT_SCHEMA

__all__ = [
    "episode_schema",
    "export_schema",
    "inline",
    "upload_episode_schema",
    "upload_schema",
]

#: Keys that carry no constraint: kept where they are, never merged.
_NOTES = frozenset({"title", "description", "default", "examples"})


def episode_schema() -> dict[str, Any]:
    """The episode as `capture episodes --json` prints each one (JSON Schema 2020-12)."""
    return copy.deepcopy(_episode_schema())


@cache
def _episode_schema() -> dict[str, Any]:
    return _document(
        msgspec.json.schema(Episode),
        EPISODE_SCHEMA,
        "agent-capture: one episode",
        "One episode as `capture episodes --json` prints it. Times are UTC, ISO 8601 with "
        "milliseconds and Z. Fields are only added within a version.",
    )


def export_schema() -> dict[str, Any]:
    """One line of the canonical export (`episodes.jsonl`), JSON Schema 2020-12."""
    return copy.deepcopy(_export_schema())


@cache
def _export_schema() -> dict[str, Any]:
    return _document(
        msgspec.json.schema(export_episode()),
        EXPORT_SCHEMA,
        "agent-capture canonical export: one episode",
        "One line of episodes.jsonl: the episode JSON (agent-capture/episode@1) at the export's "
        "level, with its tiers, tier history, each hunk's context and the split. A field a level "
        "leaves out is absent or null. Times are UTC, ISO 8601 with milliseconds and Z. Fields "
        "are only added within a version.",
    )


def _document(schema: dict[str, Any], ident: str, title: str, description: str) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": ident,
        "title": title,
        "description": description,
        **schema,
    }


def upload_schema() -> dict[str, Any]:
    """The body of `POST /v1/episodes`, written out (no references, no `anyOf`)."""
    return copy.deepcopy(_upload_schema())


@cache
def _upload_schema() -> dict[str, Any]:
    return inline(msgspec.json.schema(upload_batch()))


def upload_episode_schema() -> dict[str, Any]:
    """One uploaded episode, written out."""
    return copy.deepcopy(_upload_episode_schema())


@cache
def _upload_episode_schema() -> dict[str, Any]:
    return inline(msgspec.json.schema(upload_episode()))


def inline(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every `$ref` replaced by its definition and every `anyOf` of plain
    alternatives (a type, or null) merged into one node with a list of types: the same values
    validate. An `anyOf` that cannot be merged that way (two alternatives constraining the same
    keyword differently) is refused."""
    defs: dict[str, Any] = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        if "$ref" in node:
            out.update(walk(defs[node["$ref"].rsplit("/", 1)[-1]]))
        if "anyOf" in node:
            out.update(_merge([walk(b) for b in node["anyOf"]]))
        for key, value in node.items():
            if key in ("$ref", "anyOf", "$defs"):
                continue
            out[key] = (
                {k: walk(v) for k, v in value.items()} if key == "properties" else walk(value)
            )
        return out

    result: dict[str, Any] = walk(schema)
    return result


def _merge(branches: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    types: list[str] = []
    for branch in branches:
        kinds = branch.get("type")
        if "enum" in branch:
            if kinds is not None or "enum" in merged:
                raise ValueError(f"cannot merge an enum alternative: {branches}")
        elif kinds is None:
            raise ValueError(f"cannot merge an alternative without a type: {branches}")
        for kind in [kinds] if isinstance(kinds, str) else kinds or []:
            if kind in types:
                raise ValueError(f"two alternatives of type {kind}: {branches}")
            types.append(kind)
        for key, value in branch.items():
            if key == "type" or key in _NOTES:
                continue
            if key in merged and merged[key] != value:
                raise ValueError(f"alternatives disagree on {key}: {branches}")
            merged[key] = value
    if "enum" in merged:
        # an enum or null: null joins the enum's values
        if types not in ([], ["null"]):
            raise ValueError(f"cannot merge an enum with other types: {branches}")
        merged["enum"] = [*merged["enum"], *([None] if types else [])]
    else:
        merged = {"type": types[0] if len(types) == 1 else types, **merged}
    for note in ("title", "description"):
        found = next((b[note] for b in branches if note in b), None)
        if found is not None:
            merged.setdefault(note, found)
    return merged
