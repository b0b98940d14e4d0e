"""The episode contract as a Markdown reference page: every part's fields with their types,
where they must be present, how they leave the machine and what they mean, then the
vocabularies. `schema_markdown()` is what the documentation site's "Episode schema" page is
built from, so the page is the contract's own words.
"""

from __future__ import annotations

import types
import typing
from enum import StrEnum
from typing import Annotated, Any

import msgspec

from capture.episode.fields import TIMESTAMP_PATTERN, Required, field_marks
from capture.episode.model import (
    PARTS,
    CollectorRecord,
    ExportedEpisode,
    ExportedProposal,
    HunkContext,
    SharedEpisode,
    SharedLateSignals,
    SharedProposal,
    SharedTestRun,
    SharedTests,
)
from capture.episode.variants import upload_batch
from capture.episode.vocabulary import (
    EPISODE_SCHEMA,
    EXPORT_SCHEMA,
    RUN_SOURCES,
    SHARE_RULES,
    TIER_REASONS,
    Author,
    CheckpointVia,
    EvidenceKind,
    HunkStatus,
    Level,
    Outcome,
    ResultsFrom,
    RevertKind,
    RunLink,
    RunStatus,
    Split,
    State,
    Tier,
    Transition,
    UndoneBy,
)

__all__ = ["schema_markdown"]

_VOCABULARIES: tuple[type[StrEnum], ...] = (
    State,
    Outcome,
    Tier,
    Level,
    HunkStatus,
    RunStatus,
    RunLink,
    Transition,
    ResultsFrom,
    CheckpointVia,
    EvidenceKind,
    Author,
    UndoneBy,
    RevertKind,
    Split,
)
_WIDE = 1e6
_PRESENT = {Required.LOCAL: "", Required.EXPORT: "export", Required.ALWAYS: "always"}

_INTRO = f"""# Episode schema

`capture episodes --json` prints a list of episodes, newest first: `{EPISODE_SCHEMA}`. Fields
are only ever added within a version. Times are UTC, ISO 8601 with milliseconds and `Z`
(`2026-05-28T20:26:40.123Z`); rates are 0..1, `null` when not measured. Lists are never
`null`.

The same definition describes what leaves the machine: an upload to a team collector (an
anonymized episode at the `metrics`, `redacted` or `full` level, with the fields anonymization
adds), and each line of the canonical export (`{EXPORT_SCHEMA}`, with the fields the export
adds). There, a field a level leaves out is absent or `null`, and a field from a newer release
is kept.

This page is generated from the contract, `capture/episode/` in the source, as are the JSON
Schema shipped with the export (`episode.schema.json`) and the schema the collector validates
uploads with. The contract is written with [msgspec](https://jcristharif.com/msgspec/):
typed structs that decode and validate JSON straight from bytes, fast enough for the
collector's ingest path; JSON Schema generated from the same types; and one small compiled
dependency rather than a validation framework in the core.

Columns: **present** says where a field must be present beyond `capture episodes --json`
(*always*: in every upload and export line too, never `null`; *export*: in every export line,
maybe `null`); **shared** says how it leaves the machine (see [Sharing](#sharing)).
"""


def _constraints(metas: list[Any]) -> str:
    parts = []
    for meta in metas:
        if not isinstance(meta, msgspec.Meta):
            continue
        if meta.pattern == TIMESTAMP_PATTERN:
            return "time"
        # bounds that only keep a number inside its column's width are left unsaid
        low = meta.ge if meta.ge is not None and abs(meta.ge) < _WIDE else None
        high = meta.le if meta.le is not None and abs(meta.le) < _WIDE else None
        if low is not None and high is not None:
            parts.append(f"{low:g}..{high:g}")
        elif low is not None:
            parts.append(f">= {low:g}")
        if meta.max_length is not None:
            parts.append(f"at most {meta.max_length} characters")
        if meta.pattern is not None:
            parts.append(f"matching `{meta.pattern}`")
    return ", ".join(parts)


def _anchor(name: str) -> str:
    return name.lower().replace(" ", "-")


def _type(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        inner, *metas = typing.get_args(annotation)
        limits = _constraints(metas)
        if limits == "time":
            return "time"
        text = _type(inner)
        return f"{text} ({limits})" if limits else text
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(annotation)
        shown = [_type(a) for a in members if a is not type(None)]
        return " or ".join(shown) + (" or null" if type(None) in members else "")
    if origin is list:
        (item,) = typing.get_args(annotation)
        return f"list of {_type(item)}"
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct | StrEnum):
        return f"[{annotation.__name__}](#{_anchor(annotation.__name__)})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if isinstance(annotation, type) and annotation in names:
        return names[annotation]
    return str(annotation)


def _table(part: type[msgspec.Struct], heading: str) -> list[str]:
    lines = [f"### {heading}", "", (part.__doc__ or "").strip(), ""]
    lines += ["| field | type | present | shared | description |", "|---|---|---|---|---|"]
    for mark in field_marks(part):
        lines.append(
            f"| `{mark.name}` | {_type(mark.type)} | {_PRESENT[mark.required]} | "
            f"{mark.share.value} | {mark.description} |"
        )
    return [*lines, ""]


def _upload_table() -> list[str]:
    batch = upload_batch()
    (episodes,) = msgspec.structs.fields(batch)
    item = typing.get_args(typing.get_args(episodes.type)[0])[0]
    lines = ["### UploadItem", "", (item.__doc__ or "").strip(), ""]
    lines += ["| field | type | description |", "|---|---|---|"]
    for f in msgspec.structs.fields(item):
        inner, *metas = typing.get_args(f.type)
        described = next((m.description for m in metas if m.description), "")
        shown = "[Episode](#episode), as uploaded" if f.name == "episode" else _type(f.type)
        lines.append(f"| `{f.name}` | {shown} | {described} |")
    return [*lines, ""]


def _vocabulary(words: type[StrEnum]) -> list[str]:
    lines = [f"### {words.__name__}", "", (words.__doc__ or "").strip(), ""]
    lines.append(", ".join(f"`{w.value}`" for w in words))
    return [*lines, ""]


def schema_markdown() -> str:
    """The whole reference page, Markdown, ending with a newline."""
    lines = [_INTRO, "## The episode", ""]
    for part in PARTS:
        lines += _table(part, part.__name__)
    lines += [
        "## Added by anonymization",
        "",
        "An uploaded episode, and an exported one below the `full` level, carries these "
        "beside the fields above.",
        "",
    ]
    for part, owner in (
        (SharedEpisode, "Episode"),
        (SharedProposal, "Proposal"),
        (SharedTestRun, "TestRun"),
        (SharedTests, "TestsSummary"),
        (SharedLateSignals, "LateSignals"),
    ):
        lines += _table(part, f"{owner}, anonymized")
    lines += ["## Added by the export", ""]
    for part, heading in (
        (ExportedEpisode, "Episode, exported"),
        (ExportedProposal, "Proposal, exported"),
        (HunkContext, "HunkContext"),
        (CollectorRecord, "CollectorRecord"),
    ):
        lines += _table(part, heading)
    lines += [
        "## Upload",
        "",
        '`POST /v1/episodes` takes `{"episodes": [UploadItem, ...]}`; a body that breaks the '
        "schema is refused whole (422, naming the field).",
        "",
        *_upload_table(),
        "## Sharing",
        "",
        "| shared | at each level |",
        "|---|---|",
        *(f"| {share.value} | {rule} |" for share, rule in SHARE_RULES.items()),
        "",
        "## Vocabularies",
        "",
    ]
    for words in _VOCABULARIES:
        lines += _vocabulary(words)
    lines += [
        "### Tier reasons",
        "",
        "The reasons the tier rules write (shared as they are at every level):",
        "",
        *(f"- {reason}" for reason in sorted(TIER_REASONS)),
        "",
        "### Run sources",
        "",
        "The sources a test run is recorded from (`seen_by` holds these): "
        + ", ".join(f"`{s}`" for s in sorted(RUN_SOURCES))
        + ".",
        "",
    ]
    return "\n".join(lines).rstrip("\n") + "\n"
