"""Edits, regions, and following a region's text as the document changes.

Offsets are Python ``str`` indices (code points); a position is a *gap* between two characters.
A region's two boundaries are mapped as independent points, each with a fixed association:
``start`` sticks to the character on its right, ``end`` to the character on its left. Because
every point is mapped on its own, tracking composes: mapping through edits one at a time and
mapping through their composed changeset give the same answer (see :func:`compose`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = [
    "LEFT",
    "RIGHT",
    "Edit",
    "GapRun",
    "Region",
    "RegionIndex",
    "Section",
    "apply_changeset",
    "apply_edit",
    "compose",
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
    ``track_changeset(r, compose(text, edits)) == track_all(r, edits)`` for every region.
    """
    composer = _Composer(text)
    for edit in edits:
        composer.add(edit)
    return composer.result()


# --------------------------------------------------------------------------- RegionIndex

K = TypeVar("K", bound=Hashable)


class _Block(Generic[K]):
    """A run of regions ordered by the low end of their span, with a pending shift."""

    __slots__ = ("keys", "starts", "ends", "off", "lo_min", "lo_max", "hi_max")

    def __init__(self, keys: list[K], starts: list[int], ends: list[int], off: int = 0) -> None:
        self.keys = keys
        self.starts = starts  # relative to off
        self.ends = ends
        self.off = off
        self.lo_min = self.lo_max = self.hi_max = 0
        self.refresh()

    def refresh(self) -> None:
        """Recompute the cached bounds after entries changed (entries are sorted by low end)."""
        starts, ends = self.starts, self.ends
        if not starts:
            self.lo_min = self.lo_max = self.hi_max = 0
            return
        self.lo_min = min(starts[0], ends[0])
        self.lo_max = min(starts[-1], ends[-1])
        self.hi_max = max(max(starts), max(ends))


class RegionIndex(Generic[K]):
    """Many regions of one document, moved together through each edit.

    Regions are kept in blocks ordered by the low end of their span. An edit shifts every
    block that lies wholly after it by bumping one pending offset, skips blocks that lie
    wholly before it (a cached maximum of their high ends proves it), and recomputes only the
    blocks that hold a region the edit can reach. Per-edit cost is independent of the
    document's length and grows with the regions touched plus the number of blocks.
    """

    def __init__(self, block_size: int = 16) -> None:
        if block_size < 2:
            raise ValueError("block_size must be at least 2")
        self._block_size = block_size
        self._blocks: list[_Block[K]] = []
        self._where: dict[K, _Block[K]] = {}

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def add(self, key: K, region: Region) -> None:
        """Track ``region`` under ``key`` (replacing what ``key`` held)."""
        if key in self._where:
            self.remove(key)
        lo = min(region.start, region.end)
        blocks = self._blocks
        if not blocks:
            blocks.append(_Block([], [], []))
        blk = next((b for b in blocks if b.lo_max + b.off >= lo), blocks[-1])
        off = blk.off
        idx = 0
        while idx < len(blk.keys) and min(blk.starts[idx], blk.ends[idx]) + off < lo:
            idx += 1
        blk.keys.insert(idx, key)
        blk.starts.insert(idx, region.start - off)
        blk.ends.insert(idx, region.end - off)
        blk.refresh()
        self._where[key] = blk
        if len(blk.keys) > 2 * self._block_size:
            self._split(blk)

    def _split(self, blk: _Block[K]) -> None:
        half = len(blk.keys) // 2
        tail = _Block(blk.keys[half:], blk.starts[half:], blk.ends[half:], blk.off)
        del blk.keys[half:], blk.starts[half:], blk.ends[half:]
        blk.refresh()
        self._blocks.insert(self._block_index(blk) + 1, tail)
        for key in tail.keys:
            self._where[key] = tail

    def _block_index(self, blk: _Block[K]) -> int:
        return next(i for i, b in enumerate(self._blocks) if b is blk)

    def remove(self, key: K) -> None:
        """Stop tracking ``key``; KeyError if it is not tracked."""
        blk = self._where.pop(key)
        idx = blk.keys.index(key)
        del blk.keys[idx], blk.starts[idx], blk.ends[idx]
        if blk.keys:
            blk.refresh()
        else:
            del self._blocks[self._block_index(blk)]

    def get(self, key: K) -> Region:
        """The current region of ``key``; KeyError if it is not tracked."""
        blk = self._where[key]
        idx = blk.keys.index(key)
        return Region(blk.starts[idx] + blk.off, blk.ends[idx] + blk.off)

    def items(self) -> Iterator[tuple[K, Region]]:
        """``(key, region)`` pairs in document order (by the low end of each span)."""
        for blk in self._blocks:
            off = blk.off
            for key, s, e in zip(blk.keys, blk.starts, blk.ends, strict=True):
                yield key, Region(s + off, e + off)

    def apply(self, edit: Edit) -> list[K]:
        """Move every region through ``edit``; return the keys of the regions it touched
        (those for which :func:`is_outside` was false before the edit), in document order."""
        a, b, delta = edit.start, edit.end, edit.delta
        touched: list[K] = []
        first_moved = last_moved = -1
        blocks = self._blocks
        for bi, blk in enumerate(blocks):
            off = blk.off
            if blk.lo_min + off > b:
                if delta:
                    for later in blocks[bi:]:
                        later.off += delta
                break
            if blk.hi_max + off < a:
                continue
            if self._apply_block(blk, edit, touched):
                if first_moved < 0:
                    first_moved = bi
                last_moved = bi
        if first_moved >= 0:
            self._restore_order(first_moved, last_moved)
        return touched

    @staticmethod
    def _apply_block(blk: _Block[K], edit: Edit, touched: list[K]) -> bool:
        """Map the block's regions through ``edit``; True if a low end lay in the edit (only
        those can change their order, and they are contiguous across blocks)."""
        a, b, delta = edit.start, edit.end, edit.delta
        off = blk.off
        starts, ends, keys = blk.starts, blk.ends, blk.keys
        low_end_inside = False
        for idx in range(len(keys)):
            s = starts[idx] + off
            e = ends[idx] + off
            lo, hi = (s, e) if s <= e else (e, s)
            if hi < a:
                continue
            if lo > b:
                starts[idx] += delta
                ends[idx] += delta
                continue
            if s < e:
                if not (b <= lo or a >= hi):
                    touched.append(keys[idx])
            elif not (b < lo or a > hi):
                touched.append(keys[idx])
            low_end_inside = low_end_inside or lo >= a
            starts[idx] = map_point(s, edit, RIGHT) - off
            ends[idx] = map_point(e, edit, LEFT) - off
        blk.refresh()
        return low_end_inside

    def _restore_order(self, first: int, last: int) -> None:
        """Re-sort the entries of blocks ``first..last`` by low end if an edit disturbed
        them, keeping block sizes (entries outside the range cannot have moved past them)."""
        blocks = self._blocks[first : last + 1]
        entries: list[tuple[int, int, int, K]] = []
        for blk in blocks:
            off = blk.off
            for key, s, e in zip(blk.keys, blk.starts, blk.ends, strict=True):
                entries.append((min(s, e) + off, s + off, e + off, key))
        if all(x[0] <= y[0] for x, y in zip(entries, entries[1:], strict=False)):
            return
        entries.sort(key=_entry_lo)
        pos = 0
        for blk in blocks:
            n = len(blk.keys)
            chunk = entries[pos : pos + n]
            pos += n
            blk.off = 0
            blk.keys = [entry[3] for entry in chunk]
            blk.starts = [entry[1] for entry in chunk]
            blk.ends = [entry[2] for entry in chunk]
            blk.refresh()
            for key in blk.keys:
                self._where[key] = blk


def _entry_lo(entry: tuple[int, int, int, object]) -> int:
    return entry[0]
