"""Where a proposal's hunks sit in the file right after the edit, and what they changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel

from capture.model import HunkInput

__all__ = [
    "CONTEXT_LINES",
    "Change",
    "LocatedHunk",
    "context_around",
    "count_change",
    "line_offset",
    "locate",
]

CONTEXT_LINES = 3


@dataclass(frozen=True, slots=True)
class LocatedHunk:
    old_text: str
    new_text: str
    span: tuple[int, int] | None  # None: not found in the file
    context_before: str = ""
    context_after: str = ""


@dataclass(frozen=True, slots=True)
class Change:
    chars_added: int
    chars_removed: int
    lines_added: int
    lines_removed: int

    def __add__(self, other: Change) -> Change:
        return Change(
            self.chars_added + other.chars_added,
            self.chars_removed + other.chars_removed,
            self.lines_added + other.lines_added,
            self.lines_removed + other.lines_removed,
        )


def count_change(old_text: str, new_text: str) -> Change:
    """Characters and lines the edit added and removed (an alignment, not a length difference)."""
    if len(old_text) + len(new_text) <= 40_000:
        common = Indel.similarity(old_text, new_text) // 2 if old_text and new_text else 0
    else:
        old_l, new_l = old_text.splitlines(True), new_text.splitlines(True)
        common = sum(
            sum(len(x) for x in old_l[o.src_start : o.src_end])
            for o in Indel.opcodes(old_l, new_l)
            if o.tag == "equal"
        )
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    common_lines = Indel.similarity(old_lines, new_lines) // 2 if old_lines and new_lines else 0
    return Change(
        chars_added=len(new_text) - common,
        chars_removed=len(old_text) - common,
        lines_added=len(new_lines) - common_lines,
        lines_removed=len(old_lines) - common_lines,
    )


def context_around(text: str, lo: int, hi: int, lines: int = CONTEXT_LINES) -> tuple[str, str]:
    """Up to `lines` lines before lo and after hi, kept to find the region again later."""
    start = lo
    for _ in range(lines):
        found = text.rfind("\n", 0, max(start - 1, 0)) if start > 0 else -1
        start = found + 1 if found >= 0 else 0
        if start == 0:
            break
    end = hi
    for _ in range(lines):
        found = text.find("\n", end)
        if found < 0:
            end = len(text)
            break
        end = found + 1
    return text[start:lo], text[hi:end]


def line_offset(text: str, line: int) -> int:
    """Offset of the start of a 1-based line (clamped to the text)."""
    breaks = max(line - 1, 0)
    if breaks == 0:
        return 0
    # one split in C rather than a find per line: the rest after the last break it made
    parts = text.split("\n", breaks)
    if len(parts) <= breaks:
        return len(text)
    return len(text) - len(parts[-1])


def _find_near(text: str, needle: str, hint: int, after: int) -> int | None:
    """The occurrence of needle closest to hint, preferring those at or after `after`."""
    best: int | None = None
    pos = text.find(needle, after)
    while pos >= 0:
        if best is None or abs(pos - hint) < abs(best - hint):
            best = pos
        if pos > hint:
            break
        pos = text.find(needle, pos + 1)
    if best is None and after > 0:
        return _find_near(text, needle, hint, 0)
    return best


def locate(text: str, hunks: Sequence[HunkInput]) -> list[LocatedHunk]:
    """Find each hunk's new text in the file as it is right after the edit.

    A hunk with an offset or a line is checked there first; otherwise (or when the text there
    differs) the nearest occurrence after the previous hunk is taken. A pure deletion needs an
    offset or a line: there is no text to search for.
    """
    located: list[LocatedHunk] = []
    cursor = 0
    for hunk in hunks:
        hint = hunk.start if hunk.start is not None else None
        if hint is None and hunk.line is not None:
            hint = line_offset(text, hunk.line)
        start: int | None = None
        if hint is not None and 0 <= hint <= len(text) and text.startswith(hunk.new_text, hint):
            start = hint
        if start is None and hunk.new_text:
            start = _find_near(text, hunk.new_text, hint if hint is not None else cursor, cursor)
        if start is None:
            located.append(LocatedHunk(hunk.old_text, hunk.new_text, None))
            continue
        end = start + len(hunk.new_text)
        before, after = context_around(text, start, end)
        located.append(LocatedHunk(hunk.old_text, hunk.new_text, (start, end), before, after))
        cursor = end
    return located
