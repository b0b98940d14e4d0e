"""diff_edits: a changeset between two texts that leaves unchanged text alone."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from capture.edits.regions import (
    Edit,
    Region,
    apply_changeset,
    apply_edit,
    is_outside,
    track_changeset,
)
from capture.edits.textdiff import common_prefix, common_suffix, diff_edits


def assert_changeset_shape(old: str, changeset: list[Edit]) -> None:
    for edit in changeset:
        assert 0 <= edit.start <= edit.end <= len(old)
        assert edit.start < edit.end or edit.text
    for left, right in zip(changeset, changeset[1:], strict=False):
        assert left.end < right.start


def test_identical_texts_give_nothing() -> None:
    assert diff_edits("same\n", "same\n") == []
    assert diff_edits("", "") == []


def test_single_change_is_trimmed_to_the_characters() -> None:
    assert diff_edits("hello world", "hello brave world") == [Edit(6, 6, "brave ")]
    assert diff_edits("abc", "") == [Edit(0, 3, "")]
    assert diff_edits("", "abc") == [Edit(0, 0, "abc")]
    assert diff_edits("aXc", "aYc") == [Edit(1, 2, "Y")]


def test_several_hunks_become_separate_edits() -> None:
    old = "".join(f"line {n}\n" for n in range(10))
    new = old.replace("line 2\n", "line two\n").replace("line 7\n", "")
    assert diff_edits(old, new) == [
        Edit(old.index("2\n"), old.index("2\n") + 1, "two"),
        Edit(old.index("line 7"), old.index("line 8"), ""),
    ]


def test_common_prefix_and_suffix() -> None:
    a, b = "x" * 5000 + "A" + "y" * 3000, "x" * 5000 + "B" + "y" * 3000
    assert common_prefix(a, b) == 5000
    assert common_suffix(a, b, min(len(a), len(b))) == 3000
    assert common_prefix("abc", "abd", 1) == 1
    assert common_prefix("", "abc") == 0
    assert common_suffix("abc", "abc", 2) == 2


def test_region_between_two_hunks_keeps_its_text() -> None:
    old = "".join(f"def f{n}():\n    return {n}\n\n" for n in range(30))
    target = "def f15():\n    return 15\n"
    region = Region(old.index(target), old.index(target) + len(target))
    new = old.replace("return 3\n", "return 3 + 0\n").replace("def f27", "def g27")
    new = new.replace("return 10\n", "").replace("def f20", "# note\ndef f20")
    changeset = diff_edits(old, new)
    assert len(changeset) == 4
    assert all(is_outside(region, edit) for edit in changeset)
    assert track_changeset(region, changeset).text_in(new) == target


def test_crlf_and_cr_line_endings() -> None:
    old = "a\r\nb\r\nc\r\nd\r\ne\r\n"
    new = "a\r\nB\r\nc\r\nd\r\nE\r\n"
    assert diff_edits(old, new) == [Edit(3, 4, "B"), Edit(12, 13, "E")]
    old_cr, new_cr = old.replace("\r\n", "\r"), new.replace("\r\n", "\r")
    assert len(diff_edits(old_cr, new_cr)) == 2


def test_repetitive_lines_still_give_small_edits() -> None:
    old = "}\n" * 5000
    lines = old.splitlines(keepends=True)
    lines[100] = "changed\n"
    lines[4000] = "changed\n"
    new = "".join(lines)
    changeset = diff_edits(old, new)
    assert apply_changeset(old, changeset) == new
    assert len(changeset) == 2
    assert sum(e.end - e.start for e in changeset) <= 4


def test_large_file_with_scattered_changes() -> None:
    lines = [f"    value_{n} = compute({n}, {n % 17})\n" for n in range(20_000)]
    for n in range(0, 20_000, 50):
        lines[n] = "\n"  # repeated lines, as code has
    old = "".join(lines)
    changed = list(lines)
    changed[10] = "    value_10 = compute(10, 99)\n"
    changed[7_000:7_002] = []
    changed.insert(12_345, "    inserted = True\n")
    changed[19_990] = changed[19_990].upper()
    new = "".join(changed)
    start = time.perf_counter()
    changeset = diff_edits(old, new)
    elapsed = time.perf_counter() - start
    assert apply_changeset(old, changeset) == new
    assert_changeset_shape(old, changeset)
    assert len(changeset) == 4
    assert sum(e.end - e.start for e in changeset) < 200
    assert elapsed < 2.0
    untouched = old.index("    value_15001 = ")
    region = Region(untouched, untouched + 20)
    assert track_changeset(region, changeset).text_in(new) == region.text_in(old)


@st.composite
def old_and_new(draw: st.DrawFn) -> tuple[str, str]:
    alphabet = draw(st.sampled_from(["ab\n", "abc\r\n", "a\n", "xy \n"]))
    old = draw(st.text(alphabet, max_size=40))
    if draw(st.booleans()):
        return old, draw(st.text(alphabet, max_size=40))
    new = old
    for _ in range(draw(st.integers(1, 5))):
        start = draw(st.integers(0, len(new)))
        end = draw(st.integers(start, min(len(new), start + 4)))
        new = apply_edit(new, Edit(start, end, draw(st.text(alphabet, max_size=4))))
    return old, new


@settings(max_examples=500, deadline=None)
@given(old_and_new())
def test_diff_applies_and_has_changeset_shape(case: tuple[str, str]) -> None:
    old, new = case
    changeset = diff_edits(old, new)
    assert apply_changeset(old, changeset) == new
    assert_changeset_shape(old, changeset)


@settings(max_examples=300, deadline=None)
@given(old_and_new(), st.data())
def test_regions_outside_every_edit_keep_their_text(
    case: tuple[str, str], data: st.DataObject
) -> None:
    old, new = case
    changeset = diff_edits(old, new)
    lo = data.draw(st.integers(0, len(old)))
    region = Region(lo, data.draw(st.integers(lo, len(old))))
    if all(is_outside(region, edit) for edit in changeset):
        assert track_changeset(region, changeset).text_in(new) == region.text_in(old)
