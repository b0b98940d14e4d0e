"""The changeset between two versions of a text, when only the versions are known.

Regions are carried across a change by :func:`capture.edits.regions.track_changeset`, so the diff
must leave text that did not change outside every edit: a region far from the changes keeps
its text exactly. The common case (one changed stretch) is a prefix/suffix trim at C speed;
several hunks get a line-level diff, anchored on lines unique to both sides so that large
files with a few scattered changes stay fast, then each changed block is trimmed to the
characters that really differ.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from difflib import SequenceMatcher
from itertools import accumulate

from capture.edits.regions import Edit

__all__ = ["common_prefix", "common_suffix", "diff_edits"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_FIRST_BLOCK = 256
_MAX_DISTANCE = 200  # lines inserted + deleted within one gap before giving up on Myers
_AUTOJUNK_ABOVE = 4_000_000  # gap area (lines x lines) beyond which difflib may junk lines


def common_prefix(a: str, b: str, lo: int = 0, limit: int | None = None) -> int:
    """Length of the common prefix of ``a[lo:]`` and ``b[lo:]`` (at most ``limit``).

    Compares growing slices (C ``memcmp``) and bisects the first mismatching one, so it is
    linear in the answer rather than in the strings.
    """
    n = min(len(a), len(b)) - lo if limit is None else limit
    done, step = 0, _FIRST_BLOCK
    while done < n:
        size = min(step, n - done)
        i = lo + done
        if a[i : i + size] != b[i : i + size]:
            return done + _bisect_equal_prefix(a, b, i, size)
        done += size
        step *= 2
    return n


def _bisect_equal_prefix(a: str, b: str, i: int, size: int) -> int:
    good, bad = 0, size  # a[i:i+good] == b[i:i+good]; a[i:i+bad] != b[i:i+bad]
    while bad - good > 1:
        mid = (good + bad) // 2
        if a[i : i + mid] == b[i : i + mid]:
            good = mid
        else:
            bad = mid
    return good


def common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix of ``a`` and ``b``, at most ``limit``."""
    done, step = 0, _FIRST_BLOCK
    la, lb = len(a), len(b)
    while done < limit:
        size = min(step, limit - done)
        if a[la - done - size : la - done] != b[lb - done - size : lb - done]:
            good, bad = 0, size
            while bad - good > 1:
                mid = (good + bad) // 2
                if a[la - done - mid : la - done] == b[lb - done - mid : lb - done]:
                    good = mid
                else:
                    bad = mid
            return done + good
        done += size
        step *= 2
    return limit


def _trimmed(old: str, new: str, old_lo: int, old_hi: int, new_lo: int, new_hi: int) -> Edit:
    """One edit replacing ``old[old_lo:old_hi]`` by ``new[new_lo:new_hi]``, both ends trimmed."""
    n = min(old_hi - old_lo, new_hi - new_lo)
    head = common_prefix(old[old_lo:old_hi], new[new_lo:new_hi], 0, n)
    tail = common_suffix(old[old_lo + head : old_hi], new[new_lo + head : new_hi], n - head)
    return Edit(old_lo + head, old_hi - tail, new[new_lo + head : new_hi - tail])


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def _unique_anchors(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """Pairs of lines that occur exactly once on each side, longest increasing chain.

    This is the patience-diff idea: such lines almost never match by accident, and between
    consecutive anchors the remaining work for difflib is small.
    """
    count_a: dict[str, int] = {}
    for line in a:
        count_a[line] = count_a.get(line, 0) + 1
    count_b: dict[str, int] = {}
    index_b: dict[str, int] = {}
    for j, line in enumerate(b):
        count_b[line] = count_b.get(line, 0) + 1
        index_b[line] = j
    pairs = [
        (i, index_b[line])
        for i, line in enumerate(a)
        if count_a[line] == 1 and count_b.get(line) == 1
    ]
    return _longest_increasing(pairs)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest chain of ``pairs`` (sorted by first item) increasing in the second item."""
    tails: list[int] = []  # tails[k]: smallest second item ending a chain of length k+1
    tail_at: list[int] = []  # index in pairs of that chain's last element
    parent: list[int] = []
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(n)
        else:
            tails[k] = j
            tail_at[k] = n
        parent.append(tail_at[k - 1] if k > 0 else -1)
    chain: list[tuple[int, int]] = []
    n = tail_at[-1] if tail_at else -1
    while n >= 0:
        chain.append(pairs[n])
        n = parent[n]
    chain.reverse()
    return chain


def _matching_blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """Matching line blocks ``(i, j, size)`` in order, ending with the ``(len, len, 0)``
    sentinel, like :meth:`difflib.SequenceMatcher.get_matching_blocks`."""
    blocks: list[tuple[int, int, int]] = []
    prev_i = prev_j = 0
    for i, j in [*_unique_anchors(a, b), (len(a), len(b))]:
        if i > prev_i and j > prev_j:
            blocks.extend(_gap_blocks(a, b, prev_i, i, prev_j, j))
        if i < len(a):
            blocks.append((i, j, 1))
        prev_i, prev_j = i + 1, j + 1
    merged: list[tuple[int, int, int]] = []
    for i, j, size in blocks:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + size)
        elif size:
            merged.append((i, j, size))
    merged.append((len(a), len(b), 0))
    return merged


def _gap_blocks(
    a: list[str], b: list[str], i0: int, i1: int, j0: int, j1: int
) -> list[tuple[int, int, int]]:
    """Matching blocks between two anchors: a minimal diff when the gap differs in few lines,
    difflib's heuristic (with its junk rule only for very large gaps) otherwise."""
    sub_a, sub_b = a[i0:i1], b[j0:j1]
    found = _myers(sub_a, sub_b, _MAX_DISTANCE)
    if found is None:
        autojunk = len(sub_a) * len(sub_b) > _AUTOJUNK_ABOVE
        matcher = SequenceMatcher(None, sub_a, sub_b, autojunk=autojunk)
        found = [block for block in matcher.get_matching_blocks() if block[2]]
    return [(i0 + i, j0 + j, size) for i, j, size in found]


def _run(a: list[str], b: list[str], x: int, y: int) -> int:
    """How many items ``a[x:]`` and ``b[y:]`` share at their start (galloping slices)."""
    n = min(len(a) - x, len(b) - y)
    done, step = 0, 8
    while done < n:
        size = min(step, n - done)
        if a[x + done : x + done + size] != b[y + done : y + done + size]:
            good, bad = 0, size
            while bad - good > 1:
                mid = (good + bad) // 2
                if a[x + done : x + done + mid] == b[y + done : y + done + mid]:
                    good = mid
                else:
                    bad = mid
            return done + good
        done += size
        step *= 2
    return n


def _myers(a: list[str], b: list[str], max_d: int) -> list[tuple[int, int, int]] | None:
    """Matching blocks of a shortest edit script (Myers' greedy algorithm), or None when
    more than ``max_d`` lines would have to be inserted or deleted; the budget bounds the
    quadratic part of the work."""
    n, m = len(a), len(b)
    off = max_d + 1
    v = [0] * (2 * max_d + 3)
    trace: list[list[int]] = []
    for d in range(max_d + 1):
        trace.append(v[:])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            if x <= n and y <= m:
                x += _run(a, b, x, y)
            v[off + k] = x
            if x >= n and x - k >= m:
                return _backtrack(trace, off, n, m)
    return None


def _backtrack(trace: list[list[int]], off: int, n: int, m: int) -> list[tuple[int, int, int]]:
    blocks: list[tuple[int, int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        prev_k = k + 1 if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]) else k - 1
        prev_x = v[off + prev_k]
        prev_y = prev_x - prev_k
        start_x, start_y = (prev_x, prev_y + 1) if prev_k == k + 1 else (prev_x + 1, prev_y)
        if d == 0:
            start_x = start_y = 0
        if x > start_x:
            blocks.append((start_x, start_y, x - start_x))
        x, y = prev_x, prev_y
    blocks.reverse()
    return blocks


def diff_edits(old: str, new: str) -> list[Edit]:
    """A changeset turning ``old`` into ``new``: sorted, disjoint edits in ``old``'s offsets.

    ``apply_changeset(old, diff_edits(old, new)) == new``. Unchanged text between changes is
    left outside every edit, with at least one untouched character between two edits.
    """
    if old == new:
        return []
    limit = min(len(old), len(new))
    head = common_prefix(old, new, 0, limit)
    tail = common_suffix(old, new, limit - head)
    if not (_has_break(old, head, len(old) - tail) or _has_break(new, head, len(new) - tail)):
        return [Edit(head, len(old) - tail, new[head : len(new) - tail])]
    # Whole lines from here on, so that a deleted line is deleted with its own terminator
    # rather than shifted onto its neighbour (which would drag regions along with it).
    head = _line_start_before(old, new, head)
    tail = len(old) - _line_start_after(old, len(old) - tail)
    old_hi, new_hi = len(old) - tail, len(new) - tail
    old_mid, new_mid = old[head:old_hi], new[head:new_hi]
    if not old_mid or not new_mid:
        return [_trimmed(old, new, head, old_hi, head, new_hi)]
    a, b = _lines(old_mid), _lines(new_mid)
    starts_a = list(accumulate(map(len, a), initial=0))
    starts_b = list(accumulate(map(len, b), initial=0))
    edits: list[Edit] = []
    i_prev = j_prev = 0
    for i, j, size in _matching_blocks(a, b):
        if i > i_prev or j > j_prev:
            edit = _trimmed(
                old,
                new,
                head + starts_a[i_prev],
                head + starts_a[i],
                head + starts_b[j_prev],
                head + starts_b[j],
            )
            if edit.start < edit.end or edit.text:
                edits.append(edit)
        i_prev, j_prev = i + size, j + size
    return edits


def _has_break(text: str, lo: int, hi: int) -> bool:
    return text.find("\n", lo, hi) >= 0 or text.find("\r", lo, hi) >= 0


def _line_start_before(old: str, new: str, head: int) -> int:
    """The start of the line holding offset ``head`` of the common prefix of both texts,
    never between the two characters of a ``"\r\n"`` of either text."""
    q = head
    while True:
        q = max(old.rfind("\n", 0, q), old.rfind("\r", 0, q)) + 1
        splits = old[q - 1 : q + 1] == "\r\n" or new[q - 1 : q + 1] == "\r\n"
        if q == 0 or not splits:
            return q
        q -= 1


def _line_start_after(text: str, pos: int) -> int:
    """The first line start at or after ``pos`` (or the end of ``text``)."""
    if pos == 0 or text[pos - 1] == "\n" or (text[pos - 1] == "\r" and text[pos : pos + 1] != "\n"):
        return pos
    breaks = [i for i in (text.find("\n", pos), text.find("\r", pos)) if i >= 0]
    if not breaks:
        return len(text)
    i = min(breaks)
    return i + 2 if text[i : i + 2] == "\r\n" else i + 1
