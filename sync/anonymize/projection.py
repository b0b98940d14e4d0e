"""What the anonymizer is given and gives back: the workspace's policy, the projection of one
episode, and the one serialization used for hashing, preview and upload."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import orjson

from sync.anonymize.levels import Level

__all__ = ["Projection", "WorkspacePolicy", "content_hash", "dumps"]


def dumps(value: Any) -> str:
    """The one serialization used for hashing, preview and upload: compact, UTF-8, key order as
    built. orjson writes it 6x faster than the json module; what orjson refuses (a lone
    surrogate, an integer over 64 bits) is written by the json module."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def content_hash(serialized: str) -> str:
    return hashlib.sha256(serialized.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class WorkspacePolicy:
    level: Level
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Projection:
    #: The shareable episode; None when nothing of it may go (every file it touched excluded).
    episode: dict[str, Any] | None
    #: Why the second scan refused it; non-empty means: never send.
    quarantine: tuple[str, ...] = ()
    secrets: int = 0
    excluded_files: int = 0
    #: The episode as it is sent (`dumps(episode)`), computed once here.
    serialized: str | None = None
