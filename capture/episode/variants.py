"""The episode's other shapes, derived from `model`: what an upload carries, and one line of the
canonical export. Neither names a field of its own; both are the local parts with:

- what anonymization adds (`SharedEpisode`, ...) after each part's own fields;
- for the export, what the export adds (`ExportedEpisode`, `ExportedProposal`);
- every field optional and nullable but those required there (`Required.ALWAYS`: the
  collector refuses an upload without them; `Required.EXPORT`: every export line has them,
  maybe null), because a level may leave a field out and an older client never wrote a newer
  one;
- unknown fields allowed: a newer client's are stored, not refused;
- on the wire, a vocabulary's word is a name (a newer client's tier is stored, not refused);
  the export keeps each vocabulary, as its lines are written by this release.

The types are built when first asked for (`msgspec.defstruct`), one per part and shape.
"""

from __future__ import annotations

import types
import typing
from enum import StrEnum
from functools import cache
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from capture.episode.fields import (
    EPISODE_ID_PATTERN,
    MAX_REVISION,
    FieldMark,
    Name,
    Required,
    doc,
    field_marks,
)
from capture.episode.model import (
    Episode,
    ExportedEpisode,
    ExportedProposal,
    LateSignals,
    Proposal,
    SharedEpisode,
    SharedLateSignals,
    SharedProposal,
    SharedTestRun,
    SharedTests,
    TestRun,
    TestsSummary,
)
from capture.episode.vocabulary import Level

__all__ = ["Shape", "additions", "export_episode", "shaped", "upload_batch", "upload_episode"]

Shape = Literal["wire", "export"]

_SHARED: dict[type[msgspec.Struct], type[msgspec.Struct]] = {
    Episode: SharedEpisode,
    Proposal: SharedProposal,
    TestRun: SharedTestRun,
    TestsSummary: SharedTests,
    LateSignals: SharedLateSignals,
}
_EXPORTED: dict[type[msgspec.Struct], type[msgspec.Struct]] = {
    Episode: ExportedEpisode,
    Proposal: ExportedProposal,
}
_REQUIRED = {"wire": Required.ALWAYS, "export": Required.EXPORT}


def additions(part: type[msgspec.Struct], shape: Shape) -> tuple[type[msgspec.Struct], ...]:
    """The parts whose fields follow `part`'s own in that shape."""
    found = [_SHARED[part]] if part in _SHARED else []
    if shape == "export" and part in _EXPORTED:
        found.append(_EXPORTED[part])
    return tuple(found)


def _mark_meta(mark: FieldMark) -> Meta:
    return doc(mark.description, mark.share, required=mark.required, flag=mark.flag)


def _reshape(annotation: Any, shape: Shape) -> Any:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        inner, *metas = typing.get_args(annotation)
        return Annotated[(_reshape(inner, shape), *metas)]
    if origin in (typing.Union, types.UnionType):
        members = tuple(_reshape(a, shape) for a in typing.get_args(annotation))
        return typing.Union[members]  # noqa: UP007 - built from a tuple
    if origin is list:
        (item,) = typing.get_args(annotation)
        return list[_reshape(item, shape)]  # type: ignore[misc]
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return shaped(annotation, shape)
    if shape == "wire" and isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return Name
    return annotation


@cache
def shaped(part: type[msgspec.Struct], shape: Shape) -> type[msgspec.Struct]:
    """`part` as it is in an upload (`wire`) or an export line (`export`)."""
    threshold = _REQUIRED[shape]
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for source in (part, *additions(part, shape)):
        for mark in field_marks(source):
            value = _reshape(mark.type, shape)
            if mark.required >= threshold:
                # Required here; only what the collector requires may not be null.
                nullable = mark.required < Required.ALWAYS
                annotation = value | None if nullable else value
                fields.append((mark.name, Annotated[annotation, _mark_meta(mark)]))
            else:
                fields.append((mark.name, Annotated[value | None, _mark_meta(mark)], None))
    return msgspec.defstruct(
        part.__name__,
        fields,
        kw_only=True,
        module=f"{__name__}.{shape}",
        namespace={"__doc__": part.__doc__},
    )


def upload_episode() -> type[msgspec.Struct]:
    """One episode as an upload carries it."""
    return shaped(Episode, "wire")


def export_episode() -> type[msgspec.Struct]:
    """One line of the canonical export."""
    return shaped(Episode, "export")


@cache
def upload_batch() -> type[msgspec.Struct]:
    """The body of `POST /v1/episodes`: the collector's whole wire format."""
    item = msgspec.defstruct(
        "UploadItem",
        [
            (
                "id",
                Annotated[str, Meta(pattern=EPISODE_ID_PATTERN, description="The episode's id")],
            ),
            (
                "revision",
                Annotated[
                    int,
                    Meta(
                        ge=1, le=MAX_REVISION, description="Its revision: each change is a new one"
                    ),
                ],
            ),
            (
                "idempotency_key",
                Annotated[str, Meta(max_length=160, description="{id}:{revision}")],
            ),
            ("level", Annotated[Level, Meta(description="The level it was anonymized at")]),
            ("episode", Annotated[upload_episode(), Meta(description="The anonymized episode")]),
        ],
        forbid_unknown_fields=True,
        kw_only=True,
        module=f"{__name__}.wire",
        namespace={"__doc__": "One episode of an upload, with its revision."},
    )
    return msgspec.defstruct(
        "UploadBatch",
        [("episodes", Annotated[list[item], Meta(description="The episodes of this upload")])],  # type: ignore[valid-type]
        forbid_unknown_fields=True,
        module=f"{__name__}.wire",
        namespace={"__doc__": "The body of POST /v1/episodes."},
    )
