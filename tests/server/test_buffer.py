"""The server's document model agrees with the core's LineIndex, change after change."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from capture.edits.positions import LineIndex, PositionEncoding, range_to_edit
from capture.edits.regions import apply_changeset, apply_edit
from server.buffer import TextBuffer

ALPHABET = st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "é", "中", "😀", "\t"])
TEXTS = st.lists(ALPHABET, max_size=60).map("".join)
ENCODINGS = st.sampled_from(list(PositionEncoding))
POS = st.integers(min_value=-2, max_value=14)
CHANGE = st.tuples(POS, POS, POS, POS, TEXTS)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.lists(CHANGE, max_size=12), ENCODINGS, st.integers(min_value=2, max_value=5))
def test_changes_match_the_reference(
    text: str, changes: list[tuple[int, int, int, int, str]], encoding: PositionEncoding, size: int
) -> None:
    buffer = TextBuffer(text, block_size=size)
    reference = text
    for sl, sc, el, ec, new in changes:
        expected = range_to_edit(LineIndex(reference), sl, sc, el, ec, new, encoding)
        edit = buffer.change(sl, sc, el, ec, new, encoding)
        assert (edit.start, edit.end, edit.text) == (expected.start, expected.end, expected.text)
        reference = apply_edit(reference, expected)
        assert buffer.text == reference
        assert len(buffer) == len(reference)
    index = LineIndex(reference)
    assert buffer.line_count == index.line_count
    for line in range(-1, index.line_count + 2):
        assert buffer.line_text(line) == index.line_text(line)
        for character in (0, 1, 2, 5, 100):
            assert buffer.position_to_offset(line, character, encoding) == (
                index.position_to_offset(line, character, encoding)
            )
    for offset in range(-1, len(reference) + 2):
        assert buffer.offset_to_position(offset, encoding) == index.offset_to_position(
            offset, encoding
        )


@settings(max_examples=200, deadline=None)
@given(TEXTS, TEXTS)
def test_full_replacement_returns_the_changeset(old: str, new: str) -> None:
    buffer = TextBuffer(old, block_size=3)
    changeset = buffer.replace(new)
    assert buffer.text == new
    assert apply_changeset(old, changeset) == new
    assert buffer.line_count == LineIndex(new).line_count


def test_typing_keeps_untouched_lines_and_blocks() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    buffer = TextBuffer(text, block_size=16)
    edit = buffer.change(500, 4, 500, 4, "X")
    assert edit.start == text.index("line 500") + 4
    assert buffer.line_text(500) == "lineX 500"
    assert buffer.line_text(499) == "line 499"
    buffer.change(10, 0, 12, 0, "")
    assert buffer.line_text(10) == "line 12"
    assert buffer.line_count == 999


def test_lone_surrogates_and_huge_columns_are_clamped() -> None:
    buffer = TextBuffer("a\ud800b\n😀x", block_size=2)
    for encoding in PositionEncoding:
        assert 0 <= buffer.position_to_offset(0, 10**9, encoding) <= 3
        assert buffer.position_to_offset(10**9, 0, encoding) == len(buffer)
    # UTF-16 column 1 is the middle of the emoji's surrogate pair: it means the emoji's start.
    edit = buffer.change(1, 1, 1, 2, "", PositionEncoding.UTF16)
    assert (edit.start, edit.end) == (4, 5)
    assert buffer.text == "a\ud800b\nx"


@settings(max_examples=200, deadline=None)
@given(TEXTS, st.integers(min_value=-3, max_value=80), st.integers(min_value=-3, max_value=80))
def test_slice_reads_the_lines_it_spans(text: str, start: int, end: int) -> None:
    buffer = TextBuffer(text, block_size=2)
    buffer.change(0, 0, 0, 0, "")  # drop the cached whole text
    lo = min(max(start, 0), len(text))
    assert buffer.slice(start, end) == text[lo : max(min(end, len(text)), lo)]
