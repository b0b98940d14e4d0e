"""LSP positions <-> code-point offsets, and keeping the line index up to date."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capture.edits.positions import LineIndex, PositionEncoding, range_to_edit, split_lines
from capture.edits.regions import Edit, apply_edit

U8, U16, U32 = PositionEncoding.UTF8, PositionEncoding.UTF16, PositionEncoding.UTF32
ALPHABET = "ab \t\r\n😀é中"


def test_encoding_values_are_the_lsp_names() -> None:
    assert [e.value for e in PositionEncoding] == ["utf-8", "utf-16", "utf-32"]
    assert PositionEncoding("utf-16") is U16


def test_split_lines_follows_the_lsp_terminators() -> None:
    assert split_lines("") == [""]
    assert split_lines("a\nb\r\nc\rd") == ["a\n", "b\r\n", "c\r", "d"]
    assert split_lines("a\n") == ["a\n", ""]
    assert split_lines("\r\r\n\n") == ["\r", "\r\n", "\n", ""]
    assert split_lines("a\x0bb\u2028c") == ["a\x0bb\u2028c"]  # not LSP terminators


def test_empty_text() -> None:
    index = LineIndex("")
    assert index.line_count == 1
    assert index.position_to_offset(0, 0) == 0
    assert index.position_to_offset(0, 5) == 0
    assert index.position_to_offset(3, 0) == 0
    assert index.offset_to_position(0) == (0, 0)
    assert index.offset_to_position(10) == (0, 0)


def test_emoji_is_two_utf16_units_and_four_utf8_bytes() -> None:
    index = LineIndex("a😀b\n")
    assert index.offset_to_position(2, U16) == (0, 3)
    assert index.offset_to_position(2, U8) == (0, 5)
    assert index.offset_to_position(2, U32) == (0, 2)
    assert index.position_to_offset(0, 3, U16) == 2
    assert index.position_to_offset(0, 5, U8) == 2
    assert index.position_to_offset(0, 2, U32) == 2


def test_inside_a_code_point_goes_to_its_start() -> None:
    index = LineIndex("a😀b")
    assert index.position_to_offset(0, 2, U16) == 1  # between the two surrogates
    for inside in (2, 3, 4):
        assert index.position_to_offset(0, inside, U8) == 1


def test_cjk_is_one_utf16_unit_and_three_utf8_bytes() -> None:
    index = LineIndex("中文x")
    assert index.offset_to_position(2, U16) == (0, 2)
    assert index.offset_to_position(2, U8) == (0, 6)
    assert index.position_to_offset(0, 6, U8) == 2
    assert index.position_to_offset(0, 4, U8) == 1  # inside 文


def test_crlf_and_lone_cr_are_single_terminators() -> None:
    text = "ab\r\ncd\ref\ngh"
    index = LineIndex(text)
    assert index.line_count == 4
    assert [index.line_start(n) for n in range(4)] == [0, 4, 7, 10]
    assert [index.line_text(n) for n in range(4)] == ["ab", "cd", "ef", "gh"]
    assert index.position_to_offset(1, 0) == 4
    assert index.position_to_offset(2, 1) == 8
    assert index.offset_to_position(3) == (0, 2)  # between \r and \n: the line's end


def test_positions_past_the_end_are_clamped() -> None:
    text = "héllo\r\nwörld"
    index = LineIndex(text)
    assert index.position_to_offset(0, 99) == 5  # before the terminator
    assert index.position_to_offset(1, 99) == len(text)
    assert index.position_to_offset(7, 0) == len(text)
    assert index.position_to_offset(-1, -3) == 0
    assert index.offset_to_position(len(text) + 5) == (1, 5)
    assert index.line_start(9) == len(text)
    assert index.line_text(9) == ""


def test_text_ending_with_a_terminator_has_an_empty_last_line() -> None:
    index = LineIndex("a\n")
    assert index.line_count == 2
    assert index.offset_to_position(2) == (1, 0)
    assert index.position_to_offset(1, 0) == 2


def test_lone_surrogates_count_as_one_unit() -> None:
    index = LineIndex("a\ud800b")
    assert index.offset_to_position(3, U16) == (0, 3)
    assert index.position_to_offset(0, 2, U16) == 2


def test_range_to_edit() -> None:
    index = LineIndex("x😀y\nsecond line\n")
    edit = range_to_edit(index, 0, 3, 1, 6, "Z", U16)
    assert edit == Edit(2, 10, "Z")
    assert apply_edit(index.text, edit) == "x😀Z line\n"
    assert range_to_edit(index, 1, 6, 0, 3, "", U16) == Edit(2, 10, "")  # reversed: ordered


def test_update_handles_joining_and_splitting_crlf() -> None:
    index = LineIndex("a\rb")
    index.update(Edit(2, 2, "\n"))  # "a\r\nb": the \r and \n join
    assert index.line_count == 2
    assert index.line_start(1) == 3
    index.update(Edit(2, 2, "x"))  # "a\rx\nb": they part again
    assert index.text == "a\rx\nb"
    assert index.line_count == 3
    index.update(Edit(2, 3, ""))  # "a\r\nb"
    assert index.line_count == 2
    with pytest.raises(ValueError):
        index.update(Edit(0, 99, ""))


def _offsets_round_trip(text: str, index: LineIndex) -> None:
    for offset in range(len(text) + 1):
        inside_crlf = 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n"
        for encoding in PositionEncoding:
            position = index.offset_to_position(offset, encoding)
            back = index.position_to_offset(*position, encoding)
            assert back == (offset - 1 if inside_crlf else offset)


@settings(max_examples=200, deadline=None)
@given(st.text(ALPHABET, max_size=30))
def test_round_trips(text: str) -> None:
    index = LineIndex(text)
    assert index.text == text
    assert len(index) == len(text)
    assert index.line_count == len(split_lines(text))
    _offsets_round_trip(text, index)


@settings(max_examples=200, deadline=None)
@given(st.text(ALPHABET, max_size=20), st.integers(0, 5), st.integers(0, 40))
def test_position_in_utf16_matches_encoding_the_prefix(text: str, line: int, char: int) -> None:
    index = LineIndex(text)
    offset = index.position_to_offset(line, char, U16)
    line_no, column = index.offset_to_position(offset, U16)
    prefix = text[index.line_start(line_no) : offset]
    assert column == len(prefix.encode("utf-16-le")) // 2
    assert column <= char or line >= index.line_count


@st.composite
def edited_text(draw: st.DrawFn) -> tuple[str, list[Edit], int]:
    text = draw(st.text(ALPHABET, max_size=25))
    edits: list[Edit] = []
    current = text
    for _ in range(draw(st.integers(1, 8))):
        start = draw(st.integers(0, len(current)))
        end = draw(st.integers(start, min(len(current), start + 5)))
        edit = Edit(start, end, draw(st.text(ALPHABET, max_size=4)))
        edits.append(edit)
        current = apply_edit(current, edit)
    return text, edits, draw(st.integers(1, 3))


@settings(max_examples=200, deadline=None)
@given(edited_text())
def test_updated_index_equals_a_fresh_one(case: tuple[str, list[Edit], int]) -> None:
    text, edits, block_size = case
    index = LineIndex(text, block_size=block_size)
    for edit in edits:
        index.update(edit)
        text = apply_edit(text, edit)
        fresh = LineIndex(text)
        assert index.text == text
        assert index.line_count == fresh.line_count
        assert [index.line_start(n) for n in range(index.line_count)] == [
            fresh.line_start(n) for n in range(fresh.line_count)
        ]
    _offsets_round_trip(text, index)


def test_many_lines_across_blocks() -> None:
    text = "".join(f"line {n}{'é' if n % 3 else ''}\n" for n in range(2000))
    index = LineIndex(text, block_size=16)
    target = index.line_start(1500)
    index.update(Edit(target, target, "new\r\nlines\n"))
    text = apply_edit(text, Edit(target, target, "new\r\nlines\n"))
    assert index.line_count == 2003
    assert index.line_text(1500) == "new"
    assert index.line_text(1502) == "line 1500"
    assert index.position_to_offset(1999, 7) == text.index("line 1997é") + 7
    assert index.text == text
