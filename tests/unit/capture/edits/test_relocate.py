"""relocate: finding a hunk again by content, conservatively."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from capture.edits.regions import Region
from capture.edits.relocate import relocate

BEFORE = "def load(path):\n    with open(path) as fh:\n"
HUNK = "        data = json.load(fh)\n        validate(data)\n"
AFTER = "    return data\n\n\ndef save(path, data):\n"
FILE = "import json\n\n\n" + BEFORE + HUNK + AFTER + "    pass\n"


def found(text: str, region: Region | None) -> str | None:
    return None if region is None else region.text_in(text)


def test_single_exact_occurrence_is_taken() -> None:
    region = relocate(FILE, HUNK, BEFORE, AFTER)
    assert region == Region(FILE.index(HUNK), FILE.index(HUNK) + len(HUNK))


def test_single_occurrence_needs_no_context() -> None:
    text = "x = 1\n" + HUNK + "y = 2\n"
    assert found(text, relocate(text, HUNK, "unrelated\n", "also unrelated\n")) == HUNK


def test_duplicates_are_told_apart_by_their_context() -> None:
    text = "other():\n    pass\n" + HUNK + "# end\n" + BEFORE + HUNK + AFTER
    region = relocate(text, HUNK, BEFORE, AFTER)
    assert region is not None
    assert region.start == text.rindex(HUNK)


def test_duplicates_with_equal_context_use_the_hint() -> None:
    block = BEFORE + HUNK + AFTER
    text = block + "\n# ---\n" + block
    first, second = text.index(HUNK), text.rindex(HUNK)
    assert relocate(text, HUNK, BEFORE, AFTER, hint=first + 3) == Region(first, first + len(HUNK))
    near_second = relocate(text, HUNK, BEFORE, AFTER, hint=second - 10)
    assert near_second == Region(second, second + len(HUNK))


def test_ambiguous_duplicates_without_a_hint_give_none() -> None:
    block = BEFORE + HUNK + AFTER + ("" if len(BEFORE + HUNK + AFTER) % 2 == 0 else "\n")
    text = block + block
    assert relocate(text, HUNK, BEFORE, AFTER) is None
    halfway = (text.index(HUNK) + text.rindex(HUNK)) // 2
    assert relocate(text, HUNK, BEFORE, AFTER, hint=halfway) is None


def test_edited_hunk_between_both_contexts() -> None:
    edited = "        data = json.load(fh, strict=False)\n"
    text = "import json\n\n\n" + BEFORE + edited + AFTER
    assert found(text, relocate(text, HUNK, BEFORE, AFTER)) == edited


def test_edited_hunk_with_contexts_too_far_apart_is_lost() -> None:
    filler = "".join(f"    line_{n} = {n}\n" for n in range(200))
    text = BEFORE + filler + AFTER
    assert relocate(text, HUNK, BEFORE, AFTER) is None


def test_edited_hunk_next_to_the_only_surviving_context() -> None:
    edited = "        data = json.load(fh)\n        validate(data, strict=True)\n"
    text = "import json\n\n\n" + BEFORE + edited + "    return rewritten\n"
    region = relocate(text, HUNK, BEFORE, AFTER)
    assert region is not None
    assert region.start == text.index(edited)
    assert "validate(data" in region.text_in(text)


def test_edited_hunk_right_before_the_only_surviving_context() -> None:
    edited = "        data = json.load(fh)\n        validate(data)  # checked\n"
    text = "import json\n\n\ndef load_file(p):\n" + edited + AFTER
    region = relocate(text, HUNK, BEFORE, AFTER)
    assert region is not None
    assert region.end == text.index(AFTER)
    assert "json.load(fh)" in region.text_in(text)


def test_one_context_without_the_hunk_nearby_is_lost() -> None:
    text = "import json\n\n\n" + BEFORE + "        completely = different(code)\n" + "tail\n"
    assert relocate(text, HUNK, BEFORE, AFTER) is None


def test_nothing_matching_gives_none() -> None:
    assert relocate("nothing in common here\n", HUNK, BEFORE, AFTER) is None
    assert relocate("", HUNK, BEFORE, AFTER) is None


def test_empty_contexts_mean_the_file_edges() -> None:
    text = HUNK + "rest\n" + HUNK
    assert relocate(text, HUNK, "", "rest\n") == Region(0, len(HUNK))
    assert relocate(text, HUNK, "rest\n", "") == Region(text.rindex(HUNK), len(text))
    edited = "        data = yaml.load(fh)\n"
    assert found(edited + "rest\n", relocate(edited + "rest\n", HUNK, "", "rest\n")) == edited


def test_pure_deletion_where_the_contexts_meet() -> None:
    text = "import json\n\n\n" + BEFORE + AFTER
    point = len("import json\n\n\n" + BEFORE)
    assert relocate(text, "", BEFORE, AFTER) == Region(point, point)


def test_pure_deletion_after_before_when_after_changed() -> None:
    text = BEFORE + "    new_line()\n" + "    something else\n"
    assert relocate(text, "", BEFORE, AFTER) == Region(len(BEFORE), len(BEFORE))


def test_pure_deletion_before_after_when_before_changed() -> None:
    text = "def load_file(p):\n" + AFTER
    point = text.index(AFTER)
    assert relocate(text, "", BEFORE, AFTER) == Region(point, point)


def test_pure_deletion_ambiguity_and_absence() -> None:
    text = BEFORE + AFTER + BEFORE + AFTER
    assert relocate(text, "", BEFORE, AFTER) is None
    point = len(BEFORE + AFTER + BEFORE)
    assert relocate(text, "", BEFORE, AFTER, hint=point + 5) == Region(point, point)
    assert relocate("unrelated\n", "", BEFORE, AFTER) is None
    assert relocate("", "", "", "") == Region(0, 0)
    assert relocate("text", "", "", "") is None


@settings(max_examples=100, deadline=None)
@given(st.text("abc\n", max_size=30), st.text("abc\n", min_size=1, max_size=6), st.data())
def test_a_relocated_exact_hunk_holds_its_text(text: str, hunk: str, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(text)))
    text = text[:cut] + hunk + text[cut:]
    before = text[max(0, cut - 5) : cut]
    after = text[cut + len(hunk) : cut + len(hunk) + 5]
    region = relocate(text, hunk, before, after, hint=data.draw(st.none() | st.integers(0, 40)))
    if region is not None:
        assert region.text_in(text) == hunk
