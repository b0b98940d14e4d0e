"""Following a file's hunks from one known text to the next, and reading what they hold now."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from capture.edits.outcomes import HunkObservation, Measurement, measure, observe_hunk
from capture.edits.regions import Region, track_changeset
from capture.edits.relocate import relocate
from capture.edits.textdiff import diff_edits

__all__ = ["TrackedHunk", "follow", "measure_gone", "measure_hunks"]


@dataclass(frozen=True, slots=True)
class TrackedHunk:
    old_text: str
    new_text: str
    region: Region | None  # None: lost
    context_before: str = ""
    context_after: str = ""


def follow(baseline: str | None, text: str, hunks: Sequence[TrackedHunk]) -> list[Region | None]:
    """Where each hunk's region is in `text`.

    With the previous text known, regions move through the diff between the two (continuity).
    Without it, or for hunks already lost, they are found again by content, or stay lost.
    """
    changeset = diff_edits(baseline, text) if baseline is not None else None
    result: list[Region | None] = []
    for hunk in hunks:
        if hunk.region is not None and changeset is not None:
            result.append(track_changeset(hunk.region, changeset))
            continue
        hint = None if hunk.region is None else hunk.region.span()[0]
        result.append(
            relocate(text, hunk.new_text, hunk.context_before, hunk.context_after, hint=hint)
        )
    return result


def measure_hunks(text: str | None, hunks: Sequence[TrackedHunk]) -> Measurement:
    """What the hunks hold in `text` (None: the file cannot be read, so every hunk is lost)."""
    observations: list[HunkObservation] = []
    for hunk in hunks:
        span = None if text is None or hunk.region is None else hunk.region.span()
        # No context at all is what a caller that never knew it passes (a past edit judged from
        # one later text): it then gets the version-1 reading of a deletion's neighbours. Only an
        # edit that emptied the file has none either, and there any copy beside the point is back.
        context = (hunk.context_before, hunk.context_after)
        known = context if any(context) else None
        observations.append(observe_hunk(text or "", hunk.old_text, hunk.new_text, span, known))
    return measure(observations)


def measure_gone(hunks: Sequence[TrackedHunk], *, created_file: bool) -> Measurement:
    """What the hunks hold once their file no longer exists. A file the agent created is back
    to what it was before the edit, absent: its old state is back. Any other file's hunks can
    no longer be observed (deleted, moved, or gone with a branch switch: nothing says which)."""
    if created_file and hunks:
        return Measurement(0.0, 0.0, old_back=True, observed_hunks=len(hunks), lost_hunks=0)
    return Measurement(0.0, 0.0, old_back=False, observed_hunks=0, lost_hunks=len(hunks))
