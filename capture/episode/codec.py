"""The episode JSON in and out through the contract's types.

`encode_episodes` is what `capture episodes --json` prints: the store's episodes built into the
contract's `Episode` (strictly: a field the contract does not name, or a value of the wrong
type, is an error here rather than a silent change of the schema) and encoded by msgspec.
`decode_episodes` reads that output back, as strictly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from capture.episode.model import Episode

__all__ = ["decode_episodes", "encode_episodes", "to_episodes"]

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(list[Episode], strict=True)


def to_episodes(episodes: Sequence[dict[str, Any]]) -> list[Episode]:
    """The store's episode dicts as the contract's types; `msgspec.ValidationError` (naming the
    field, `$[0].proposals[1].outcome`) when one does not match."""
    return msgspec.convert(list(episodes), list[Episode], strict=True)


def encode_episodes(episodes: Sequence[dict[str, Any]], *, indent: int = 2) -> bytes:
    """A JSON list of the episodes, UTF-8, indented, ending with a newline."""
    typed = to_episodes(episodes)
    try:
        data = _ENCODER.encode(typed)
    except UnicodeEncodeError:
        # a lone surrogate has no UTF-8 form: the json module writes it escaped
        text = json.dumps(msgspec.to_builtins(typed), indent=indent, ensure_ascii=True)
        return text.encode() + b"\n"
    return msgspec.json.format(data, indent=indent) + b"\n"


def decode_episodes(data: bytes | str) -> list[Episode]:
    """`capture episodes --json` output read back strictly into the contract's types."""
    return _DECODER.decode(data)
