"""An open document's text, changed edit by edit at a cost that follows the edit.

pygls's own document keeps one string and rebuilds it (and its line list) on every change,
so a keystroke in a 1 MB file costs a 1 MB copy. :class:`TextBuffer` keeps the lines (with
their terminators) in blocks, with per-block character counts whose prefix sums are rebuilt
lazily: typing on one line touches one string, one block's count and, at the next position
lookup, a prefix sum over the blocks (a few hundred integers for 20,000 lines).

Positions follow the LSP and :mod:`capture.edits.positions`: ``"\\n"``, ``"\\r\\n"`` and ``"\\r"``
end lines, ``"\\r\\n"`` counts as one terminator, a column is counted in the negotiated
encoding's units and clamped the forgiving way editors expect (past the line's end -> its end,
inside a code point -> its start). The results agree with
:class:`capture.edits.positions.LineIndex`, which the tests use as the reference.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from capture.edits.positions import PositionEncoding, split_lines
from capture.edits.regions import Edit
from capture.edits.textdiff import diff_edits

__all__ = ["TextBuffer"]

_UTF16 = PositionEncoding.UTF16
_UTF8 = PositionEncoding.UTF8
_UTF32 = PositionEncoding.UTF32


def _terminator_length(line: str) -> int:
    if line.endswith("\n"):
        return 2 if line.endswith("\r\n") else 1
    return 1 if line.endswith("\r") else 0


def _column_to_index(content: str, character: int, encoding: PositionEncoding) -> int:
    """Code-point index in ``content`` of a column in ``encoding``'s units."""
    if character <= 0:
        return 0
    if encoding is _UTF32 or content.isascii():
        return min(character, len(content))
    if encoding is _UTF16:
        raw = content.encode("utf-16-le", "surrogatepass")
        if character * 2 >= len(raw):
            return len(content)
        # A cut through a surrogate pair leaves half a pair, which "ignore" drops: the column
        # then names the start of that code point.
        return len(raw[: character * 2].decode("utf-16-le", "ignore"))
    raw = content.encode("utf-8", "surrogatepass")
    if character >= len(raw):
        return len(content)
    cut = raw[:character]
    while cut:
        try:
            return len(cut.decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            cut = cut[:-1]  # inside a multi-byte sequence: back to its start
    return 0


def _units(s: str, encoding: PositionEncoding) -> int:
    if encoding is _UTF32 or s.isascii():
        return len(s)
    if encoding is _UTF16:
        return len(s.encode("utf-16-le", "surrogatepass")) // 2
    return len(s.encode("utf-8", "surrogatepass"))


class TextBuffer:
    """A document's text with LSP position conversion, updated in place per edit."""

    __slots__ = ("_blocks", "_chars", "_starts", "_line_prefix", "_char_prefix", "_text", "_size")

    def __init__(self, text: str = "", block_size: int = 128) -> None:
        if block_size < 2:
            raise ValueError("block_size must be at least 2")
        self._size = block_size
        self._text: str | None = None
        self._reset(text)

    def _reset(self, text: str) -> None:
        lines = split_lines(text)
        size = self._size
        self._blocks: list[list[str]] = [lines[i : i + size] for i in range(0, len(lines), size)]
        self._chars: list[int] = [sum(map(len, block)) for block in self._blocks]
        self._starts: list[list[int] | None] = [None] * len(self._blocks)
        self._line_prefix: list[int] = list(accumulate(map(len, self._blocks), initial=0))
        self._char_prefix: list[int] | None = None
        self._text = text

    # ----------------------------------------------------------------- reading

    @property
    def text(self) -> str:
        """The whole text (joined on demand, cached until the next change)."""
        if self._text is None:
            self._text = "".join(["".join(block) for block in self._blocks])
        return self._text

    def __len__(self) -> int:
        return self._prefix()[-1]

    @property
    def line_count(self) -> int:
        return self._line_prefix[-1]

    def line_text(self, line: int) -> str:
        """``line`` without its terminator ("" outside the document)."""
        if not 0 <= line < self.line_count:
            return ""
        bi, j = self._locate_line(line)
        raw = self._blocks[bi][j]
        return raw[: len(raw) - _terminator_length(raw)]

    def line_start(self, line: int) -> int:
        if line >= self.line_count:
            return len(self)
        bi, j = self._locate_line(max(line, 0))
        return self._prefix()[bi] + self._block_starts(bi)[j]

    def position_to_offset(
        self, line: int, character: int, encoding: PositionEncoding = _UTF16
    ) -> int:
        """Code-point offset of an LSP position, clamped into the text."""
        if line >= self.line_count:
            return len(self)
        bi, j = self._locate_line(max(line, 0))
        raw = self._blocks[bi][j]
        content = raw[: len(raw) - _terminator_length(raw)]
        start = self._prefix()[bi] + self._block_starts(bi)[j]
        return start + _column_to_index(content, character, encoding)

    def offset_to_position(
        self, offset: int, encoding: PositionEncoding = _UTF16
    ) -> tuple[int, int]:
        """LSP ``(line, character)`` of an offset (clamped; inside a ``"\\r\\n"`` -> line end)."""
        prefix = self._prefix()
        offset = min(max(offset, 0), prefix[-1])
        bi = min(bisect_right(prefix, offset) - 1, len(self._blocks) - 1)
        starts = self._block_starts(bi)
        j = bisect_right(starts, offset - prefix[bi]) - 1
        raw = self._blocks[bi][j]
        content = raw[: len(raw) - _terminator_length(raw)]
        column = min(offset - prefix[bi] - starts[j], len(content))
        return self._line_prefix[bi] + j, _units(content[:column], encoding)

    def slice(self, start: int, end: int) -> str:
        """``text[start:end]``, read from the lines it spans only."""
        prefix = self._prefix()
        start = min(max(start, 0), prefix[-1])
        end = min(max(end, start), prefix[-1])
        if self._text is not None or start == end:
            return self.text[start:end] if start != end else ""
        first, last = self._line_of(start), self._line_of(end)
        base = self.line_start(first)
        return "".join(self._lines(first, last))[start - base : end - base]

    # ----------------------------------------------------------------- changing

    def change(
        self,
        start_line: int,
        start_character: int,
        end_line: int,
        end_character: int,
        text: str,
        encoding: PositionEncoding = _UTF16,
    ) -> Edit:
        """Apply one ranged ``TextDocumentContentChangeEvent``; returns it as an :class:`Edit`
        in the coordinates of the text before the change.

        Typing within one line (the common case) replaces one line string; anything else
        (line breaks typed or deleted, a range across lines) re-splits only the lines it
        touches.
        """
        if (
            start_line == end_line
            and 0 <= start_line < self._line_prefix[-1]
            and "\n" not in text
            and "\r" not in text
        ):
            bi, j = self._locate_line(start_line)
            block = self._blocks[bi]
            raw = block[j]
            content_end = len(raw) - _terminator_length(raw)
            content = raw[:content_end]
            a = _column_to_index(content, start_character, encoding)
            b = _column_to_index(content, end_character, encoding)
            if b < a:
                a, b = b, a
            new_raw = raw[:a] + text + raw[b:]
            # A line emptied down to a bare "\n" after a line ending in "\r" would join the
            # two terminators into one "\r\n": leave that to the general path.
            if not (new_raw[:1] == "\n" and (bi or j)):
                base = self._prefix()[bi] + self._block_starts(bi)[j]
                block[j] = new_raw
                delta = len(text) - (b - a)
                if delta:
                    self._chars[bi] += delta
                    self._starts[bi] = None
                    self._char_prefix = None
                self._text = None
                return Edit(base + a, base + b, text)
        start = self.position_to_offset(start_line, start_character, encoding)
        end = self.position_to_offset(end_line, end_character, encoding)
        if end < start:
            start, end = end, start
        edit = Edit(start, end, text)
        self.apply(edit)
        return edit

    def apply(self, edit: Edit) -> None:
        """Apply ``edit`` (code-point offsets in the current text)."""
        total = len(self)
        if edit.end > total:
            raise ValueError(f"edit {edit} beyond text of length {total}")
        last_line = self.line_count - 1
        # One neighbour line on each side: a "\r" and a "\n" may join or part at the edges.
        first = max(self._line_of(edit.start) - 1, 0)
        last = min(self._line_of(edit.end) + 1, last_line)
        window_start = self.line_start(first)
        window = "".join(self._lines(first, last))
        lo, hi = edit.start - window_start, edit.end - window_start
        new_lines = split_lines(window[:lo] + edit.text + window[hi:])
        if last < last_line:
            new_lines.pop()  # the window ended with an untouched terminator
        self._splice(first, last, new_lines)
        self._text = None

    def replace(self, text: str) -> list[Edit]:
        """Replace the whole text (a full-content change); returns the changeset between the
        two versions (sorted, disjoint edits in the old text's coordinates)."""
        old = self.text
        changeset = diff_edits(old, text)
        if changeset:
            self._reset(text)
        return changeset

    # ----------------------------------------------------------------- internals

    def _prefix(self) -> list[int]:
        prefix = self._char_prefix
        if prefix is None:
            prefix = self._char_prefix = list(accumulate(self._chars, initial=0))
        return prefix

    def _block_starts(self, bi: int) -> list[int]:
        starts = self._starts[bi]
        if starts is None:
            block = self._blocks[bi]
            starts = self._starts[bi] = list(accumulate(map(len, block[:-1]), initial=0))
        return starts

    def _locate_line(self, line: int) -> tuple[int, int]:
        bi = min(bisect_right(self._line_prefix, line) - 1, len(self._blocks) - 1)
        return bi, line - self._line_prefix[bi]

    def _line_of(self, offset: int) -> int:
        prefix = self._prefix()
        offset = min(max(offset, 0), prefix[-1])
        bi = min(bisect_right(prefix, offset) - 1, len(self._blocks) - 1)
        j = bisect_right(self._block_starts(bi), offset - prefix[bi]) - 1
        return self._line_prefix[bi] + j

    def _lines(self, first: int, last: int) -> list[str]:
        out: list[str] = []
        bi, j = self._locate_line(first)
        remaining = last - first + 1
        while remaining > 0:
            chunk = self._blocks[bi][j : j + remaining]
            out.extend(chunk)
            remaining -= len(chunk)
            bi, j = bi + 1, 0
        return out

    def _splice(self, first: int, last: int, new_lines: list[str]) -> None:
        """Replace lines ``first..last`` by ``new_lines``, re-chunking only the blocks involved
        (and a small neighbour, so that deletions do not leave a trail of tiny blocks)."""
        b0, j0 = self._locate_line(first)
        b_last, j1 = self._locate_line(last)
        end = sum(len(block) for block in self._blocks[b0:b_last]) + j1
        size = self._size
        b1 = b_last
        if b1 + 1 < len(self._blocks) and len(self._blocks[b1 + 1]) < size // 4:
            b1 += 1
        merged = [line for block in self._blocks[b0 : b1 + 1] for line in block]
        merged[j0 : end + 1] = new_lines
        if len(merged) <= 2 * size:
            chunks = [merged] if merged else []
        else:
            chunks = [merged[i : i + size] for i in range(0, len(merged), size)]
        self._blocks[b0 : b1 + 1] = chunks
        self._chars[b0 : b1 + 1] = [sum(map(len, chunk)) for chunk in chunks]
        self._starts[b0 : b1 + 1] = [None] * len(chunks)
        if not self._blocks:  # a document always has one (maybe empty) line
            self._blocks, self._chars, self._starts = [[""]], [0], [None]
        self._line_prefix = list(accumulate(map(len, self._blocks), initial=0))
        self._char_prefix = None
