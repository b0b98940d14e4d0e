"""Finding a hunk again by its content after continuity was lost.

When a file changed while nobody watched (rewritten on disk, edited in another tool), there
is no edit stream to track a region through. What is left is the hunk's text and a few
lines of context recorded around it. This module looks for them in the new text and is
deliberately conservative: a wrong relocation silently corrupts every later measurement,
while ``None`` is an honest "lost".

Context semantics: ``before``/``after`` are the (up to ~3) lines that surrounded the hunk
when it was applied. An *empty* context means there was nothing on that side, i.e. the hunk
touched the start (``before == ""``) or the end (``after == ""``) of the file.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from rapidfuzz import fuzz

from capture.edits.regions import Region

__all__ = ["FUZZY_CUTOFF", "MAX_CANDIDATES", "relocate"]

FUZZY_CUTOFF = 85.0
"""Minimum rapidfuzz score for an edited hunk found next to a single surviving context."""
MAX_CANDIDATES = 10_000
"""More occurrences than this of a needle make it too generic to decide anything."""
_MIN_FUZZY_CHARS = 8  # shorter hunks match fuzzily almost anywhere


@dataclass(frozen=True, slots=True)
class _Candidate:
    score: float
    region: Region


def relocate(
    text: str, new_text: str, before: str, after: str, hint: int | None = None
) -> Region | None:
    """Where the hunk that wrote ``new_text`` (between ``before`` and ``after``) is in
    ``text``, or None when that cannot be told with confidence.

    - ``new_text`` occurs exactly: a single occurrence is taken; among several, the one whose
      surroundings best match the contexts wins, ties broken by distance to ``hint``.
    - ``new_text`` is gone (edited): the text between the two contexts, found in order and
      not implausibly far apart; with only one context, the hunk must still be fuzzily
      recognisable right next to it.
    - ``new_text == ""`` (a pure deletion): the point where the contexts meet, or else the
      point right after ``before`` (or right before ``after``).

    A tie that ``hint`` cannot break gives None.
    """
    if new_text:
        starts = _occurrences(text, new_text)
        if len(starts) > MAX_CANDIDATES:
            return None
        if starts:
            return _best_occurrence(text, new_text, before, after, starts, hint)
        return _edited(text, new_text, before, after, hint)
    return _deleted(text, before, after, hint)


def _occurrences(text: str, needle: str) -> list[int]:
    """Start offsets of ``needle`` in ``text`` (overlapping ones too), capped past the limit."""
    found: list[int] = []
    i = text.find(needle)
    while i >= 0 and len(found) <= MAX_CANDIDATES:
        found.append(i)
        i = text.find(needle, i + 1)
    return found


def _choose(candidates: list[_Candidate], hint: int | None) -> Region | None:
    """The best-scoring candidate; among equals the one nearest ``hint``; None if still tied."""
    if not candidates:
        return None
    best = max(c.score for c in candidates)
    top = [c for c in candidates if c.score == best]
    if len(top) == 1:
        return top[0].region
    if hint is None:
        return None
    distances = sorted(
        (abs(min(c.region.start, c.region.end) - hint), i) for i, c in enumerate(top)
    )
    if distances[0][0] == distances[1][0]:
        return None
    return top[distances[0][1]].region


def _before_score(text: str, before: str, start: int) -> float:
    if not before:
        return 100.0 if start == 0 else 0.0
    return fuzz.ratio(before, text[max(0, start - len(before)) : start])


def _after_score(text: str, after: str, end: int) -> float:
    if not after:
        return 100.0 if end == len(text) else 0.0
    return fuzz.ratio(after, text[end : end + len(after)])


def _best_occurrence(
    text: str, new_text: str, before: str, after: str, starts: list[int], hint: int | None
) -> Region | None:
    n = len(new_text)
    if len(starts) == 1:
        return Region(starts[0], starts[0] + n)
    candidates = [
        _Candidate(
            _before_score(text, before, s) + _after_score(text, after, s + n), Region(s, s + n)
        )
        for s in starts
    ]
    return _choose(candidates, hint)


def _context_ends(text: str, before: str) -> list[int]:
    """Where text right after an occurrence of ``before`` starts (file start if empty)."""
    if not before:
        return [0]
    starts = _occurrences(text, before)
    return [] if len(starts) > MAX_CANDIDATES else [s + len(before) for s in starts]


def _context_starts(text: str, after: str) -> list[int]:
    """Where occurrences of ``after`` start (file end if empty)."""
    if not after:
        return [len(text)]
    starts = _occurrences(text, after)
    return [] if len(starts) > MAX_CANDIDATES else starts


def _max_gap(new_text: str) -> int:
    """The longest stretch between the contexts still believed to be the edited hunk."""
    return 4 * len(new_text) + 400


def _edited(text: str, new_text: str, before: str, after: str, hint: int | None) -> Region | None:
    if not before and not after:
        return None
    ends = _context_ends(text, before)
    starts = _context_starts(text, after)
    candidates: list[_Candidate] = []
    for lo in ends:
        k = bisect_left(starts, lo)
        if k < len(starts) and starts[k] - lo <= _max_gap(new_text):
            hi = starts[k]
            candidates.append(_Candidate(fuzz.ratio(new_text, text[lo:hi]), Region(lo, hi)))
    if candidates:
        return _choose(candidates, hint)
    if len(new_text.strip()) < _MIN_FUZZY_CHARS:
        return None
    fuzzy = [c for lo in (ends if before else []) if (c := _fuzzy_after(text, new_text, lo))]
    fuzzy += [c for hi in (starts if after else []) if (c := _fuzzy_before(text, new_text, hi))]
    return _choose(fuzzy, hint)


def _window_slack(new_text: str) -> int:
    return len(new_text) // 2 + 16


def _fuzzy_after(text: str, new_text: str, lo: int) -> _Candidate | None:
    """The edited hunk recognised right after offset ``lo`` (the end of ``before``); the
    region runs from ``lo`` to the end of the match."""
    window = text[lo : lo + len(new_text) + _window_slack(new_text)]
    score, dest_start, dest_end = _align(new_text, window)
    if score < FUZZY_CUTOFF or not _adjacent(window[:dest_start], new_text):
        return None
    return _Candidate(score, Region(lo, lo + dest_end))


def _fuzzy_before(text: str, new_text: str, hi: int) -> _Candidate | None:
    """The edited hunk recognised right before offset ``hi`` (the start of ``after``); the
    region runs from the start of the match to ``hi``."""
    lo = max(0, hi - len(new_text) - _window_slack(new_text))
    window = text[lo:hi]
    score, dest_start, dest_end = _align(new_text, window)
    if score < FUZZY_CUTOFF or not _adjacent(window[dest_end:], new_text):
        return None
    return _Candidate(score, Region(lo + dest_start, hi))


def _adjacent(gap: str, new_text: str) -> bool:
    """Whether the text between a context and the fuzzy match is small enough to belong to
    the edited hunk (blank, or at most a quarter of the hunk's length)."""
    return not gap.strip() or len(gap) <= len(new_text) // 4


def _align(needle: str, window: str) -> tuple[float, int, int]:
    """Score and span of ``needle``'s best match in ``window``.

    partial_ratio aligns the *shorter* string inside the longer one, so a window shorter than
    the needle (near the file's edge) is compared whole instead of scoring a perfect 100.
    """
    if len(window) < len(needle):
        return fuzz.ratio(needle, window), 0, len(window)
    alignment = fuzz.partial_ratio_alignment(needle, window)
    if alignment is None:  # only with a score_cutoff, which is not passed; kept for typing
        return 0.0, 0, 0
    return alignment.score, alignment.dest_start, alignment.dest_end


def _deleted(text: str, before: str, after: str, hint: int | None) -> Region | None:
    if not before and not after:
        return Region(0, 0) if not text else None
    ends = _context_ends(text, before)
    starts = set(_context_starts(text, after))
    meeting = [p for p in ends if p in starts]
    if meeting:
        return _choose_point(meeting, hint)
    if before and ends:
        return _choose_point(ends, hint)
    if after and starts:
        return _choose_point(sorted(starts), hint)
    return None


def _choose_point(points: list[int], hint: int | None) -> Region | None:
    return _choose([_Candidate(0.0, Region(p, p)) for p in points], hint)
