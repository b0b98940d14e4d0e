"""The contract's building blocks: the value types its fields share (a time, a rate, a count, a
name), the mark each field carries (its description, how it is shared, where it is required),
and the questions the rest of the project asks of a part's fields.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from capture.episode.vocabulary import Share

__all__ = [
    "EPISODE_ID_PATTERN",
    "EPISODE_SCHEMA_PATTERN",
    "MAX_INT",
    "MAX_REVISION",
    "TIMESTAMP_PATTERN",
    "Count",
    "Days",
    "EpisodeId",
    "ExitCode",
    "FieldMark",
    "LateSeconds",
    "Name",
    "Rate",
    "Required",
    "RulesVersion",
    "SchemaName",
    "Seconds",
    "Text",
    "Time",
    "base_type",
    "doc",
    "field_marks",
    "is_text",
    "names",
]

EPISODE_SCHEMA_PATTERN = r"^agent-capture/episode@[0-9]{1,6}$"
EPISODE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
TIMESTAMP_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$"
)
#: Integers are stored in 64-bit columns (and read by JavaScript); revisions in 32-bit ones.
MAX_INT = 2**53
MAX_REVISION = 2**31 - 1

#: UTC, ISO 8601 with milliseconds and Z (2026-05-28T20:26:40.123Z), as the store writes it.
Time = Annotated[str, Meta(pattern=TIMESTAMP_PATTERN)]
Rate = Annotated[float, Meta(ge=0, le=1)]
Count = Annotated[int, Meta(ge=0, le=MAX_INT)]
#: A short word: an id, an agent's or a model's name, a vocabulary's word.
Name = Annotated[str, Meta(max_length=256)]
#: Free text of any length: a prompt, a path, a command, a hunk's text.
Text = str
RulesVersion = Annotated[int, Meta(ge=1, le=2**31 - 1)]
ExitCode = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]
Seconds = Annotated[float, Meta(ge=0, le=1e9)]
LateSeconds = Annotated[float, Meta(ge=-1e9, le=1e9)]
Days = Annotated[float, Meta(ge=0, le=1e9)]
EpisodeId = Annotated[str, Meta(pattern=EPISODE_ID_PATTERN)]
SchemaName = Annotated[str, Meta(pattern=EPISODE_SCHEMA_PATTERN)]


class Required(IntEnum):
    """Where a field must be present, widest last: every place it is required in, it is
    required in the narrower ones too."""

    #: In the episode as the store gives it (`capture episodes --json`).
    LOCAL = 1
    #: Also on every line of the canonical export, at every level.
    EXPORT = 2
    #: Wherever the field appears, never null: the collector refuses an upload without it.
    ALWAYS = 3


def doc(
    description: str,
    share: Share = Share.COPIED,
    *,
    required: Required = Required.LOCAL,
    flag: str | None = None,
) -> Meta:
    """A field's mark: its one-line description (in the JSON Schema and the reference page),
    how it is shared, where it is required, and for a commit the flag that stands for it."""
    extra: dict[str, Any] = {"share": share, "required": required}
    if flag is not None:
        extra["flag"] = flag
    return Meta(description=description, extra=extra)


@dataclass(frozen=True, slots=True)
class FieldMark:
    name: str
    #: the annotation as written, without the mark
    type: Any
    description: str
    share: Share
    required: Required
    flag: str | None


def _split_mark(annotation: Any) -> tuple[Any, Meta | None]:
    if typing.get_origin(annotation) is Annotated:
        inner, *metas = typing.get_args(annotation)
        marks = [m for m in metas if isinstance(m, Meta) and m.extra and "share" in m.extra]
        if marks:
            rest = [m for m in metas if m is not marks[0]]
            return (Annotated[(inner, *rest)] if rest else inner), marks[0]
    return annotation, None


def field_marks(part: type[msgspec.Struct]) -> tuple[FieldMark, ...]:
    """Each field of a part, in order, with its mark. A field without one is refused: every
    field of the contract says what it is and how it leaves the machine."""
    out = []
    for f in msgspec.structs.fields(part):
        annotation, mark = _split_mark(f.type)
        if mark is None or not mark.description:
            raise TypeError(f"{part.__name__}.{f.name} has no doc(...) mark")
        extra = mark.extra or {}
        out.append(
            FieldMark(
                name=f.name,
                type=annotation,
                description=mark.description,
                share=Share(extra["share"]),
                required=Required(extra["required"]),
                flag=extra.get("flag"),
            )
        )
    return tuple(out)


def names(part: type[msgspec.Struct], *shares: Share, exclude: bool = False) -> tuple[str, ...]:
    """The fields of a part shared by one of `shares` (with `exclude`: by none of them), in
    the part's order."""
    wanted = set(shares)
    return tuple(m.name for m in field_marks(part) if (m.share in wanted) != exclude)


def base_type(annotation: Any) -> Any:
    """The type under marks, constraints and `| None`: `str` for `Annotated[str, ...] | None`."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def is_text(mark: FieldMark) -> bool:
    """A field holding free text or a name, which a secret could hide in: a string that is not
    an id, a time or a vocabulary's word."""
    base = base_type(mark.type)
    return (
        base is str
        and mark.share not in (Share.ID, Share.TIME, Share.BY_VALUE)
        and not (isinstance(base, type) and issubclass(base, StrEnum))
    )
