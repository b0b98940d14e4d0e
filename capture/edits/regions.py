"""Edits, regions, and following a region's text as the document changes.

Offsets are Python ``str`` indices (code points); a position is a *gap* between two characters.
A region's boundaries move as points with a fixed association (``start`` sticks to the
character on its right, ``end`` to the character on its left), with one exception, so that a
rewrite of the region is not mistaken for its removal: a replacement that overlaps a normal
region's interior and reaches past one of its ends widens the region to the whole replacement
text (see :func:`track`). Pure insertions exactly at a boundary stay outside, as the
associations say; empty and crossed regions are mapped as points.

Typing continues a rewrite (the *open point*). An editor that sends one change per keystroke
turns "select the agent's line and type a new one" into a replacement by the first key and then
one insertion per key, each exactly at the region's end, where it would stay outside. So a
region remembers where the last edit that wrote into it left off (``Region.open_at``): the end
of an edit that replaced or deleted some of its characters, or of an insertion strictly inside
it or at that point. An insertion exactly at the open point extends the region even at a
boundary; any other edit (elsewhere in the document, a deletion or replacement not touching the
region's characters) closes it. Deleting at the open point (backspace) touches the region's
characters, so the point stays open and retyping stays inside. Typing a new line right after the
agent's text later, or after an edit elsewhere, is outside as before. The rule is
:func:`track_open`; :func:`track`, :func:`track_all` and
:class:`~capture.edits.region_index.RegionIndex` apply it.

A changeset (what :func:`track_changeset` moves a region through: the diff between two texts
read from disk, or edits composed into one) is the net change between two observations: typing
that continued a replacement is already part of that replacement there, and an insertion at the
end found by the next diff cannot be told from a new line typed later. So a changeset neither
consults nor leaves an open point.

A changeset (sorted, disjoint edits over one text) is tracked as its edits applied right to
left, each still in the text's coordinates. Points map the same through edits one at a time
and through their composed changeset (:func:`capture.edits.compose.compose`); regions do too,
except where widening meets a composed section that reaches over a region's end (see there).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

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
    "track_ends",
    "track_open",
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
    """A tracked stretch of text: ``start`` sticks right, ``end`` sticks left (how it moves
    through an edit is :func:`track`'s to say).

    ``start > end`` is allowed and meaningful: after the whole region was replaced, the
    boundaries cross and ``span()`` covers exactly the replacement text.

    ``open_at`` is the open point (see the module docstring): where typing that continues the
    last edit into this region would go, or None. It is memory of the keystrokes that moved the
    region, not where the region is, so it takes no part in equality.
    """

    start: int
    end: int
    open_at: int | None = field(default=None, compare=False)

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


def track_ends(start: int, end: int, edit: Edit) -> tuple[int, int]:
    """Where a region's ``start`` and ``end`` land after ``edit`` (see :func:`track`)."""
    a = edit.start
    b = edit.end
    if start < end and a < b and a < end and b > start:
        # The replaced characters include some of the region's: whatever replaced them is
        # a rewrite of the region, so the region keeps all of it, not just what survived.
        if a <= start:
            if b < end:
                return a, end + len(edit.text) - (b - a)
        elif b >= end:
            return start, a + len(edit.text)
    return map_point(start, edit, RIGHT), map_point(end, edit, LEFT)


def track_open(
    start: int, end: int, open_at: int | None, edit: Edit
) -> tuple[int, int, int | None]:
    """Where a region's ``start`` and ``end`` land after ``edit``, and its open point after it.

    An insertion exactly at ``open_at`` while that is a boundary of a normal region extends the
    region over the inserted text; otherwise the boundaries move as :func:`track_ends` says. The
    open point is then the end of the edit's new text if the edit replaced or deleted some of
    the region's characters, or was an insertion at the open point or strictly inside the
    region, and None otherwise.
    """
    a = edit.start
    b = edit.end
    n = len(edit.text)
    if a == b and a == open_at and start < end and a in (start, end):
        return start, end + n, a + n
    lo, hi = (start, end) if start <= end else (end, start)
    moved_start, moved_end = track_ends(start, end, edit)
    if max(a, lo) < min(b, hi) or (a == b and (a == open_at or lo < a < hi)):
        return moved_start, moved_end, a + n
    return moved_start, moved_end, None


def track(region: Region, edit: Edit) -> Region:
    """The region after ``edit``.

    For a normal region ``[s, e)`` (``s < e``) and ``edit`` replacing ``[a, b)`` by ``text``:

    - ``b <= s`` or ``a >= e`` (wholly outside, pure insertions at ``s`` or ``e`` included):
      the region only shifts;
    - ``a < b`` and the range overlaps the region's interior but does not cover it: the region
      becomes what survives of it plus the whole replacement text;
    - ``a <= s`` and ``b >= e`` (the whole region replaced): the boundaries cross and the span
      is exactly the replacement text;
    - anything strictly inside (a pure insertion with ``s < a < e`` included) stays inside.

    An empty or crossed region maps its boundaries as points: it absorbs whatever is inserted
    at, or replaces across, its closed span. A :class:`Section` that widens a region counts as
    one replacement: the region takes all of its text.

    Typing that continues a rewrite stays inside: an insertion exactly at the region's open
    point extends it (:func:`track_open`; the result carries its new open point).
    """
    start, end, open_at = track_open(region.start, region.end, region.open_at, edit)
    return Region(start, end, open_at)


def track_all(region: Region, edits: Iterable[Edit]) -> Region:
    """The region after ``edits``, each in the coordinates the previous ones produced (the open
    point carried from one to the next, as :func:`track` does)."""
    for edit in edits:
        region = track(region, edit)
    return region


def is_outside(region: Region, edit: Edit) -> bool:
    """True when ``edit`` cannot change what the region holds.

    A normal region (``start < end``) is open at both ends: typing right against it stays
    outside. An empty or crossed region absorbs insertions at its boundaries (its ``end``
    sticks left and its ``start`` right), so for it the test is on closed intervals. An
    insertion at a normal region's open point is inside (:func:`track_open`).
    """
    lo, hi = region.span()
    if region.start < region.end:
        if edit.start == edit.end == region.open_at:
            return False
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


def track_changeset(region: Region, changeset: Sequence[Edit]) -> Region:
    """The region after a changeset: :func:`track` through its edits from right to left, so
    that each edit meets the region in the changeset's (original) coordinates.

    For edits strictly apart (what :func:`capture.edits.textdiff.diff_edits` and
    :func:`capture.edits.compose.compose` produce) that is the changeset applied in one go:
    the region widens to an edit's whole text when the edit replaced any of the region's
    characters. The open point is neither consulted nor left (see the module docstring: a
    changeset is the net change between two observations).
    """
    start, end = region.start, region.end
    for edit in reversed(changeset):
        start, end = track_ends(start, end, edit)
    return Region(start, end)
