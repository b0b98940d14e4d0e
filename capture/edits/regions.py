"""Edits, regions, and following a region's text as the document changes.

Offsets are Python ``str`` indices (code points); a position is a *gap* between two characters.
A region's two boundaries are mapped as independent points, each with a fixed association:
``start`` sticks to the character on its right, ``end`` to the character on its left. Because
every point is mapped on its own, tracking composes: mapping through edits one at a time and
mapping through their composed changeset give the same answer (see
:func:`capture.edits.compose.compose`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "LEFT",
    "RIGHT",
    "Edit",
    "GapRun",
    "Region",
    "Section",
    "apply_changeset",
    "apply_edit",
    "is_outside",
    "map_point",
    "track",
    "track_all",
    "track_changeset",
]

LEFT = -1
"""Association of a point that sticks to the character on its left (a region's ``end``)."""
RIGHT = 1
"""Association of a point that sticks to the character on its right (a region's ``start``)."""


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``text[start:end]`` by ``text``; the unit every change is expressed in."""

    start: int
    end: int
    text: str

    def __post_init__(self) -> None:
        # Catch reversed or negative ranges where they are made, not where they corrupt a map.
        if not 0 <= self.start <= self.end:
            raise ValueError(f"invalid edit range [{self.start}, {self.end}]")

    @property
    def delta(self) -> int:
        """How much the document's length changes; later offsets shift by this much."""
        return len(self.text) - (self.end - self.start)


GapRun = tuple[int, int, int]
"""``(offset, left, right)``: original gaps from ``start + offset`` up to the next run's
offset map to ``start + left`` (association LEFT) and ``start + right`` (association RIGHT)."""


@dataclass(frozen=True, slots=True)
class Section(Edit):
    """A changeset section whose interior points do not all collapse onto its two ends.

    A plain :class:`Edit` sends every point inside ``[start, end]`` to the start (LEFT) or the
    end (RIGHT) of its new text. After several edits were merged into one section that is not
    always what happened: text typed before a later deletion keeps the deleted range's points
    on its far side, for example. ``gaps`` records where each original gap really went, as
    runs, so that mapping through the section stays exact. Applying it is a plain replacement.
    """

    gaps: tuple[GapRun, ...]

    def map_inside(self, p: int, assoc: int) -> int:
        """Where the original gap ``p`` (``start <= p <= end``) lands."""
        i = bisect_right(self.gaps, p - self.start, key=_run_offset) - 1
        _, left, right = self.gaps[i]
        return self.start + (left if assoc < 0 else right)


def _run_offset(run: GapRun) -> int:
    return run[0]


@dataclass(frozen=True, slots=True)
class Region:
    """A tracked stretch of text: ``start`` sticks right, ``end`` sticks left.

    ``start > end`` is allowed and meaningful: after the whole region was replaced, the
    boundaries cross and ``span()`` covers exactly the replacement text.
    """

    start: int
    end: int

    def span(self) -> tuple[int, int]:
        """The covered offsets in order, whichever way the boundaries point."""
        if self.start <= self.end:
            return self.start, self.end
        return self.end, self.start

    def text_in(self, text: str) -> str:
        """What the region holds in ``text``."""
        lo, hi = self.span()
        return text[lo:hi]

    @property
    def is_empty(self) -> bool:
        """True for a bare point (what a pure deletion leaves)."""
        return self.start == self.end


def map_point(p: int, edit: Edit, assoc: int) -> int:
    """Where the gap at ``p`` lands after ``edit``; ``assoc`` is LEFT (-1) or RIGHT (+1).

    LEFT: ``p <= a`` stays, ``a < p <= b`` goes to ``a``, ``p > b`` shifts by the delta.
    RIGHT: ``p < a`` stays, ``a <= p < b`` goes to ``a + len(text)``, ``p >= b`` shifts.
    An insertion exactly at ``p`` therefore leaves a LEFT point before it and a RIGHT point
    after it.
    """
    a = edit.start
    b = edit.end
    if p < a or (p == a and assoc < 0):
        return p
    if p > b or (p == b and assoc > 0):
        return p + len(edit.text) - (b - a)
    if type(edit) is not Edit and isinstance(edit, Section):
        return edit.map_inside(p, assoc)
    return a if assoc < 0 else a + len(edit.text)


def track(region: Region, edit: Edit) -> Region:
    """The region after ``edit``: each boundary mapped on its own with its association."""
    return Region(map_point(region.start, edit, RIGHT), map_point(region.end, edit, LEFT))


def track_all(region: Region, edits: Iterable[Edit]) -> Region:
    """The region after ``edits``, each in the coordinates the previous ones produced."""
    for edit in edits:
        region = track(region, edit)
    return region


def is_outside(region: Region, edit: Edit) -> bool:
    """True when ``edit`` cannot change what the region holds.

    A normal region (``start < end``) is open at both ends: typing right against it stays
    outside. An empty or crossed region absorbs insertions at its boundaries (its ``end``
    sticks left and its ``start`` right), so for it the test is on closed intervals.
    """
    lo, hi = region.span()
    if region.start < region.end:
        return edit.end <= lo or edit.start >= hi
    return edit.end < lo or edit.start > hi


def apply_edit(text: str, edit: Edit) -> str:
    """``text`` with ``edit`` applied."""
    if edit.end > len(text):
        raise ValueError(f"edit [{edit.start}, {edit.end}] beyond text of length {len(text)}")
    return text[: edit.start] + edit.text + text[edit.end :]


# --------------------------------------------------------------------------- changesets


def apply_changeset(text: str, changeset: Sequence[Edit]) -> str:
    """``text`` with a changeset (sorted, disjoint edits in ``text``'s coordinates) applied."""
    pieces: list[str] = []
    prev = 0
    for edit in changeset:
        if edit.start < prev or edit.end > len(text):
            raise ValueError(f"changeset is not sorted and disjoint within the text at {edit}")
        pieces.append(text[prev : edit.start])
        pieces.append(edit.text)
        prev = edit.end
    pieces.append(text[prev:])
    return "".join(pieces)


def _map_changeset(p: int, changeset: Sequence[Edit], assoc: int) -> int:
    # Right to left, each section sees the point still in its own (original) coordinates.
    for edit in reversed(changeset):
        p = map_point(p, edit, assoc)
    return p


def track_changeset(region: Region, changeset: Sequence[Edit]) -> Region:
    """The region after a changeset; equal to :func:`track_all` over the edits composed."""
    return Region(
        _map_changeset(region.start, changeset, RIGHT),
        _map_changeset(region.end, changeset, LEFT),
    )
