"""One open document as the server mirrors it: its text, and the regions followed in it.

Its own module because every side holds it: the documents feature keeps it up to date, the
proposals feature follows regions in it, and the events carry it between features.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from capture.edits.region_index import RegionIndex
from server.buffer import TextBuffer

__all__ = ["RECENT_CHANGES", "Document"]

#: How many recent changes remember which proposals they touched (for capture/undo).
RECENT_CHANGES = 64


@dataclass(eq=False, slots=True)
class Document:
    uri: str
    fs_path: str | None  # from the URI, unresolved; None for untitled buffers
    version: int | None
    buffer: TextBuffer
    regions: RegionIndex[int] = field(default_factory=RegionIndex)
    file: str | None = None  # resolved absolute path, once the writer thread looked it up
    recent: deque[tuple[int | None, tuple[Any, ...]]] = field(
        default_factory=lambda: deque(maxlen=RECENT_CHANGES)
    )
    dirty: bool = False  # regions moved since the store last saw them
    persist_handle: asyncio.TimerHandle | None = None
    changes: int = 0
