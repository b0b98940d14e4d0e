"""A file's text at a past moment, rebuilt from the changes a watcher recorded.

A checkpoint evaluated after its due time reads the file as it was then when a watcher followed
the file through that moment: the last change it recorded at or before the due time is the text
the file held. Where the watcher was not following the file (not started yet, killed, the laptop
asleep), nothing says what the file held, and the caller measures the disk now instead, marked
late."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Change", "Coverage", "text_at"]


@dataclass(frozen=True, slots=True)
class Change:
    """The text a file held from `at` on (None: the file did not exist)."""

    at: float
    text: str | None


@dataclass(frozen=True, slots=True)
class Coverage:
    """A watcher followed files from `start` until `until` (its last sign of life)."""

    start: float
    until: float

    def holds(self, moment: float) -> bool:
        return self.start <= moment <= self.until


def text_at(
    changes: Sequence[Change],
    moment: float,
    coverage: Coverage | None,
    baseline: Change | None = None,
) -> tuple[bool, str | None]:
    """(known, text): the text the file held at `moment`, when the changes recorded under
    `coverage` say it. Known only when the watcher was alive at `moment` and had recorded the
    file at least once since it started, by then (its first record is the text it found). The
    `baseline` (the text last measured or placed, and when) counts when it falls in the span."""
    if coverage is None or not coverage.holds(moment):
        return False, None
    recorded = [c for c in changes if coverage.start <= c.at <= moment]
    if not recorded:
        return False, None
    last = recorded[-1]  # the changes come oldest first
    if baseline is not None and last.at < baseline.at <= moment:
        last = baseline
    return True, last.text
