"""Composing a sequence of edits into one changeset over the original text.

Applying composes exactly: a burst of edits folded into a few sections gives the same text.
Tracking composes where regions move as points (see `capture.edits.regions`): through the edits
one at a time and through their composed changeset, a region ends in the same place unless a
section reaches over one of its ends (see :func:`compose`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from capture.edits.regions import LEFT, RIGHT, Edit, GapRun, Section, map_point

__all__ = ["compose"]


class _Piece:
    """A section under construction: original range, current text, and gap runs."""

    __slots__ = ("start", "end", "text", "runs")

    def __init__(self, start: int, end: int, text: str, runs: list[GapRun] | None) -> None:
        self.start = start
        self.end = end
        self.text = text
        self.runs = runs  # None: a plain replacement, every gap maps to (0, len(text))

    def current_runs(self) -> list[GapRun]:
        return self.runs if self.runs is not None else [(0, 0, len(self.text))]

    def freeze(self) -> Edit:
        if self.runs is None:
            return Edit(self.start, self.end, self.text)
        return Section(self.start, self.end, self.text, tuple(self.runs))


def _push_run(runs: list[GapRun], offset: int, left: int, right: int) -> None:
    if not runs or runs[-1][1] != left or runs[-1][2] != right:
        runs.append((offset, left, right))


class _Composer:
    """Folds a sequence of edits into a changeset over the original text.

    Sections are kept strictly apart in both original and current coordinates (a gap of at
    least one untouched character), so points outside every section only ever shift.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.pieces: list[_Piece] = []
        self.images: list[int] = []  # start of each piece in current coordinates

    def add(self, edit: Edit) -> None:
        if type(edit) is not Edit:
            raise TypeError("compose() takes plain Edit objects")
        s, e, t = edit.start, edit.end, edit.text
        if e > self.length:
            raise ValueError(f"edit {edit} beyond current text of length {self.length}")
        if s == e and not t:
            return
        i, j = self._touching(s, e)
        if j < i:
            before = self.pieces[i - 1] if i > 0 else None
            shift = 0 if before is None else self.images[i - 1] + len(before.text) - before.end
            self.pieces.insert(i, _Piece(s - shift, e - shift, t, None))
            self.images.insert(i, s)
            kept = True
        else:
            kept = self._merge(i, j, s, e, t)
        self.length += edit.delta
        self._shift_from(i + 1 if kept else i, edit.delta)

    def _touching(self, s: int, e: int) -> tuple[int, int]:
        """Indices of the first and last piece whose closed image meets ``[s, e]``."""
        images = self.images
        i = bisect_left(images, s)
        if i > 0 and images[i - 1] + len(self.pieces[i - 1].text) >= s:
            i -= 1
        j = bisect_right(images, e) - 1
        return i, j

    def _shift_from(self, i: int, delta: int) -> None:
        """Move the images of pieces ``i`` onward, which lie after the edit."""
        if delta and i < len(self.images):
            self.images[i:] = [x + delta for x in self.images[i:]]

    def _merge(self, i: int, j: int, s: int, e: int, t: str) -> bool:
        """Merge pieces ``i..j`` and the edit into piece ``i``; False if it became a no-op."""
        pieces, images = self.pieces, self.images
        first, last = pieces[i], pieces[j]
        lo = min(s, images[i])
        last_image_end = images[j] + len(last.text)
        start = s - (images[i] - first.start) if s < images[i] else first.start
        end = e - (last_image_end - last.end) if e > last_image_end else last.end
        local = Edit(s - lo, e - lo, t)
        collapsed = (local.start, local.start + len(t))  # where every covered gap goes
        runs: list[GapRun] = []
        current: list[str] = []
        if start < first.start:
            _push_run(runs, 0, *collapsed)
            current.append(self.text[start : first.start])
        for k in range(i, j + 1):
            piece = pieces[k]
            if k > i and piece.start - pieces[k - 1].end >= 2:
                _push_run(runs, pieces[k - 1].end + 1 - start, *collapsed)
            if k > i:
                current.append(self.text[pieces[k - 1].end : piece.start])
            base = images[k] - lo
            for offset, left, right in piece.current_runs():
                _push_run(
                    runs,
                    piece.start - start + offset,
                    map_point(base + left, local, LEFT),
                    map_point(base + right, local, RIGHT),
                )
            current.append(piece.text)
        if end > last.end:
            _push_run(runs, last.end + 1 - start, *collapsed)
            current.append(self.text[last.end : end])
        joined = "".join(current)
        new_text = joined[: local.start] + t + joined[local.end :]
        plain = runs == [(0, 0, len(new_text))]
        del pieces[i + 1 : j + 1]
        del images[i + 1 : j + 1]
        if start == end and not new_text:
            del pieces[i]
            del images[i]
            return False
        pieces[i] = _Piece(start, end, new_text, None if plain else runs)
        images[i] = lo
        return True

    def result(self) -> list[Edit]:
        return [piece.freeze() for piece in self.pieces]


def compose(text: str, edits: Sequence[Edit]) -> list[Edit]:
    """Fold a sequence of edits into one changeset over ``text``.

    Each edit is in the coordinates of the text the previous ones produced. The result is a
    sorted list of disjoint sections in ``text``'s coordinates; edits whose ranges touch or
    overlap (closed intervals, in current coordinates) are merged into one section. A merged
    section whose interior points do not all collapse onto its ends is returned as a
    :class:`Section`, which carries where each interior point went, so that
    ``track_changeset(r, compose(text, edits)) == track_all(r, edits)`` for every empty or
    crossed region ``r``, and for every normal one that each section lies wholly outside of or
    strictly inside. A section that reaches over an end of a normal region, or covers it,
    widens it to all of its text, as one replacement would; the edits in turn may have left
    some of that text outside (typed at the region's boundary, say), so there the two differ.
    """
    composer = _Composer(text)
    for edit in edits:
        composer.add(edit)
    return composer.result()
