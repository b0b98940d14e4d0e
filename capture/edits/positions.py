"""LSP positions (line, character in a negotiated encoding) and code-point offsets.

Editors speak in ``(line, character)`` pairs whose character unit depends on the negotiated
position encoding (UTF-16 by default), while the rest of the project works in ``str`` offsets.
:class:`LineIndex` converts between the two and is kept up to date edit by edit, so a busy
buffer never has to be rescanned. Line terminators follow the LSP: ``"\\n"``, ``"\\r\\n"``
and ``"\\r"``, with ``"\\r\\n"`` counting as one.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from enum import StrEnum
from itertools import accumulate

from capture.edits.regions import Edit

__all__ = ["LineIndex", "PositionEncoding", "range_to_edit", "split_lines"]


class PositionEncoding(StrEnum):
    """The unit of an LSP ``character``: bytes, UTF-16 code units or code points."""

    UTF8 = "utf-8"
    UTF16 = "utf-16"
    UTF32 = "utf-32"


_TERMINATOR = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The LSP lines of ``text``, each with its terminator; the last has none (maybe "")."""
    lines: list[str] = []
    prev = 0
    for match in _TERMINATOR.finditer(text):
        lines.append(text[prev : match.end()])
        prev = match.end()
    lines.append(text[prev:])
    return lines


def _content(line: str) -> str:
    """A stored line without its terminator."""
    if line.endswith("\n"):
        return line[:-2] if line.endswith("\r\n") else line[:-1]
    if line.endswith("\r"):
        return line[:-1]
    return line


def _units(s: str, encoding: PositionEncoding) -> int:
    """Length of ``s`` in ``encoding``'s units; lone surrogates count as themselves."""
    if encoding is PositionEncoding.UTF32 or s.isascii():
        return len(s)
    if encoding is PositionEncoding.UTF16:
        return len(s.encode("utf-16-le", "surrogatepass")) // 2
    return len(s.encode("utf-8", "surrogatepass"))


def _column_to_index(content: str, character: int, encoding: PositionEncoding) -> int:
    """Code-point index in ``content`` for a column; inside a code point -> its start."""
    if character <= 0:
        return 0
    if encoding is PositionEncoding.UTF32 or content.isascii():
        return min(character, len(content))
    if character >= _units(content, encoding):
        return len(content)
    # Largest k whose prefix fits in `character` units; every code point is >= 1 unit.
    lo, hi = 0, min(len(content), character)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _units(content[:mid], encoding) <= character:
            lo = mid
        else:
            hi = mid - 1
    return lo


class _Fenwick:
    """Prefix sums of non-negative counts with O(log n) update and search."""

    __slots__ = ("_tree", "total")

    def __init__(self, values: list[int]) -> None:
        tree = [0, *values]
        for i in range(1, len(tree)):
            parent = i + (i & -i)
            if parent < len(tree):
                tree[parent] += tree[i]
        self._tree = tree
        self.total = sum(values)

    def add(self, i: int, delta: int) -> None:
        """Add ``delta`` to item ``i``."""
        self.total += delta
        tree = self._tree
        i += 1
        while i < len(tree):
            tree[i] += delta
            i += i & -i

    def prefix(self, i: int) -> int:
        """Sum of the first ``i`` items."""
        tree = self._tree
        total = 0
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def search(self, target: int) -> int:
        """The largest ``i`` with ``prefix(i) <= target``."""
        tree = self._tree
        pos = 0
        step = 1 << (len(tree) - 1).bit_length()
        while step:
            nxt = pos + step
            if nxt < len(tree) and tree[nxt] <= target:
                pos = nxt
                target -= tree[nxt]
            step >>= 1
        return pos


class LineIndex:
    """A document's lines with fast offset <-> position conversion, updated per edit.

    Lines (with terminators) are stored in blocks of about ``block_size`` lines; Fenwick trees
    over the per-block line and character counts locate a line or an offset in O(log blocks).
    An edit re-splits only the lines it touches (plus one neighbour on each side, where a
    ``"\\r"`` and a ``"\\n"`` may join or part) and updates the counts of its blocks, so its
    cost does not grow with the document (only a block split rebuilds the trees, in
    O(blocks)). ASCII lines skip all encoding work.
    """

    def __init__(self, text: str = "", block_size: int = 64) -> None:
        if block_size < 1:
            raise ValueError("block_size must be positive")
        self._block_size = block_size
        lines = split_lines(text)
        self._blocks: list[list[str]] = [
            lines[i : i + block_size] for i in range(0, len(lines), block_size)
        ]
        self._starts: list[list[int] | None] = [None] * len(self._blocks)
        self._block_chars = [sum(map(len, block)) for block in self._blocks]
        self._lines_per_block = _Fenwick([])
        self._chars_per_block = _Fenwick([])
        self._text: str | None = text
        self._rebuild_prefixes()

    # ----------------------------------------------------------------- reading

    @property
    def text(self) -> str:
        """The whole current text (joined on demand, then cached until the next update)."""
        if self._text is None:
            self._text = "".join(line for block in self._blocks for line in block)
        return self._text

    @property
    def line_count(self) -> int:
        """Number of lines; a text ending with a terminator has an empty last line."""
        return self._lines_per_block.total

    def __len__(self) -> int:
        """Length of the text in code points."""
        return self._chars_per_block.total

    def line_start(self, line: int) -> int:
        """Offset where ``line`` starts (``len(text)`` past the last line)."""
        if line >= self.line_count:
            return len(self)
        bi, j = self._locate_line(max(line, 0))
        return self._chars_per_block.prefix(bi) + self._block_starts(bi)[j]

    def line_text(self, line: int) -> str:
        """``line``'s text without its terminator ("" past the last line)."""
        if not 0 <= line < self.line_count:
            return ""
        bi, j = self._locate_line(line)
        return _content(self._blocks[bi][j])

    def line_of(self, offset: int) -> int:
        """The line holding ``offset`` (clamped into the text)."""
        bi, j = self._locate_offset(offset)
        return self._lines_per_block.prefix(bi) + j

    def position_to_offset(
        self, line: int, character: int, encoding: PositionEncoding = PositionEncoding.UTF16
    ) -> int:
        """Code-point offset of an LSP position, clamped the forgiving way editors expect.

        A line past the end gives ``len(text)``; a character past the line's end gives the
        line's end (before its terminator); a character inside a code point (the middle of a
        UTF-16 surrogate pair or of a UTF-8 sequence) gives the start of that code point.
        """
        if line >= self.line_count:
            return len(self)
        line = max(line, 0)
        bi, j = self._locate_line(line)
        start = self._chars_per_block.prefix(bi) + self._block_starts(bi)[j]
        return start + _column_to_index(_content(self._blocks[bi][j]), character, encoding)

    def offset_to_position(
        self, offset: int, encoding: PositionEncoding = PositionEncoding.UTF16
    ) -> tuple[int, int]:
        """LSP ``(line, character)`` of an offset; inside a ``"\\r\\n"`` -> the line's end."""
        bi, j = self._locate_offset(offset)
        start = self._chars_per_block.prefix(bi) + self._block_starts(bi)[j]
        content = _content(self._blocks[bi][j])
        column = min(max(offset - start, 0), len(content))
        return self._lines_per_block.prefix(bi) + j, _units(content[:column], encoding)

    # ----------------------------------------------------------------- updating

    def update(self, edit: Edit) -> None:
        """Apply ``edit`` (in the current text's coordinates) to the index."""
        total = len(self)
        if edit.end > total:
            raise ValueError(f"edit {edit} beyond text of length {total}")
        blocks = self._blocks
        # The window: the lines holding the edit's ends, plus one neighbour on each side.
        b0, j0 = self._locate_offset(edit.start)
        if j0 > 0:
            j0 -= 1
        elif b0 > 0:
            b0, j0 = b0 - 1, len(blocks[b0 - 1]) - 1
        b1, j1 = self._locate_offset(edit.end)
        if j1 + 1 < len(blocks[b1]):
            j1 += 1
        elif b1 + 1 < len(blocks):
            b1, j1 = b1 + 1, 0
        at_end = b1 == len(blocks) - 1 and j1 == len(blocks[b1]) - 1
        window_start = self._chars_per_block.prefix(b0) + self._block_starts(b0)[j0]
        merged = [line for block in blocks[b0 : b1 + 1] for line in block]
        last = sum(map(len, blocks[b0:b1])) + j1
        window = "".join(merged[j0 : last + 1])
        rel_start, rel_end = edit.start - window_start, edit.end - window_start
        new_lines = split_lines(window[:rel_start] + edit.text + window[rel_end:])
        if not at_end:
            # The window ends with an untouched terminator, so its final piece is empty.
            new_lines.pop()
        merged[j0 : last + 1] = new_lines
        self._replace_blocks(b0, b1, merged)
        self._text = None

    def _replace_blocks(self, b0: int, b1: int, merged: list[str]) -> None:
        """Put ``merged`` lines in place of blocks ``b0..b1``, re-chunked to size."""
        size = self._block_size
        if len(merged) <= 2 * size:
            chunks = [merged] if merged else []
        else:
            chunks = [merged[i : i + size] for i in range(0, len(merged), size)]
        old_lines = [len(block) for block in self._blocks[b0 : b1 + 1]]
        old_chars = self._block_chars[b0 : b1 + 1]
        self._blocks[b0 : b1 + 1] = chunks
        self._starts[b0 : b1 + 1] = [None] * len(chunks)
        self._block_chars[b0 : b1 + 1] = [sum(map(len, chunk)) for chunk in chunks]
        if not self._blocks:  # the document always has one (maybe empty) line
            self._blocks, self._starts, self._block_chars = [[""]], [None], [0]
        if len(chunks) != len(old_lines):
            self._rebuild_prefixes()
            return
        for k, chunk in enumerate(chunks):
            self._lines_per_block.add(b0 + k, len(chunk) - old_lines[k])
            self._chars_per_block.add(b0 + k, self._block_chars[b0 + k] - old_chars[k])

    def _rebuild_prefixes(self) -> None:
        """Per-block line and character counts; rebuilt only when blocks split or merge."""
        self._lines_per_block = _Fenwick([len(block) for block in self._blocks])
        self._chars_per_block = _Fenwick(self._block_chars)

    # ----------------------------------------------------------------- locating

    def _block_starts(self, bi: int) -> list[int]:
        starts = self._starts[bi]
        if starts is None:
            block = self._blocks[bi]
            starts = list(accumulate(map(len, block[:-1]), initial=0))
            self._starts[bi] = starts
        return starts

    def _locate_line(self, line: int) -> tuple[int, int]:
        """Block and index within it of an existing line."""
        bi = min(self._lines_per_block.search(line), len(self._blocks) - 1)
        return bi, line - self._lines_per_block.prefix(bi)

    def _locate_offset(self, offset: int) -> tuple[int, int]:
        """Block and index of the line holding ``offset``, clamped into the text."""
        offset = min(max(offset, 0), len(self))
        bi = min(self._chars_per_block.search(offset), len(self._blocks) - 1)
        starts = self._block_starts(bi)
        j = bisect_right(starts, offset - self._chars_per_block.prefix(bi)) - 1
        return bi, j


def range_to_edit(
    index: LineIndex,
    start_line: int,
    start_character: int,
    end_line: int,
    end_character: int,
    new_text: str,
    encoding: PositionEncoding = PositionEncoding.UTF16,
) -> Edit:
    """The :class:`Edit` for an LSP ``TextDocumentContentChangeEvent`` range.

    Positions are clamped as :meth:`LineIndex.position_to_offset` does; a reversed range is
    put in order rather than rejected, as editors occasionally send one.
    """
    start = index.position_to_offset(start_line, start_character, encoding)
    end = index.position_to_offset(end_line, end_character, encoding)
    if end < start:
        start, end = end, start
    return Edit(start, end, new_text)
