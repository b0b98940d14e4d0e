"""Many regions of one document tracked at once, at a cost proportional to those an edit touches.

The LSP server moves every live region of a document through each keystroke; mapping each region
on its own (`capture.edits.regions.track`) would cost the number of regions per edit, so they are
kept in blocks that an edit can shift or skip whole.

The index applies the open-point rule of :mod:`capture.edits.regions` (typing that continues a
rewrite stays inside) as :func:`~capture.edits.regions.track` does. After any edit every open
point is the end of that edit's new text, so the index holds one such offset for the document
and the keys of the regions it is open for; an edit that does not reach a region closes it
without visiting it, since the set is rebuilt from the regions each edit reaches.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

from capture.edits.regions import Edit, Region, track_open

__all__ = ["RegionIndex"]

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
        self._open_at: int | None = None  # the open point of the regions keyed in _open
        self._open: set[K] = set()

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def add(self, key: K, region: Region) -> None:
        """Track ``region`` under ``key`` (replacing what ``key`` held); its open point, if it
        had one, is dropped: a region put in is not being typed over."""
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
        self._open.discard(key)
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
        return Region(blk.starts[idx] + blk.off, blk.ends[idx] + blk.off, self._open_point(key))

    def _open_point(self, key: K) -> int | None:
        return self._open_at if key in self._open else None

    def items(self) -> Iterator[tuple[K, Region]]:
        """``(key, region)`` pairs in document order (by the low end of each span)."""
        for blk in self._blocks:
            off = blk.off
            for key, s, e in zip(blk.keys, blk.starts, blk.ends, strict=True):
                yield key, Region(s + off, e + off, self._open_point(key))

    def apply(self, edit: Edit) -> list[K]:
        """Move every region through ``edit``; return the keys of the regions it touched
        (those for which :func:`~capture.edits.regions.is_outside` was false before the edit),
        in document order."""
        a, b, delta = edit.start, edit.end, edit.delta
        touched: list[K] = []
        was_open, open_at = self._open, self._open_at
        now_open: set[K] = set()
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
            if self._apply_block(blk, edit, touched, (was_open, open_at, now_open)):
                if first_moved < 0:
                    first_moved = bi
                last_moved = bi
        self._open = now_open
        self._open_at = a + len(edit.text) if now_open else None
        if first_moved >= 0:
            self._restore_order(first_moved, last_moved)
        return touched

    @staticmethod
    def _apply_block(
        blk: _Block[K], edit: Edit, touched: list[K], opened: tuple[set[K], int | None, set[K]]
    ) -> bool:
        """Map the block's regions through ``edit``; True if a low end lay in the edit (only
        those can change their order, and they are contiguous across blocks). ``opened`` is
        (keys open before the edit, their open point, the set to add keys still open to)."""
        a, b, delta = edit.start, edit.end, edit.delta
        off = blk.off
        starts, ends, keys = blk.starts, blk.ends, blk.keys
        low_end_inside = False
        was_open, open_at, now_open = opened
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
            key = keys[idx]
            point = open_at if key in was_open else None
            if s < e:
                if not (b <= lo or a >= hi) or a == b == point:
                    touched.append(key)
            elif not (b < lo or a > hi):
                touched.append(key)
            # Widening (and typing at an open start) only ever moves a low end that lay in the
            # edit to the edit's start, so the entries whose order may change are still those
            # flagged here.
            low_end_inside = low_end_inside or lo >= a
            s, e, point = track_open(s, e, point, edit)
            if point is not None:
                now_open.add(key)
            starts[idx] = s - off
            ends[idx] = e - off
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
