"""Regions widen to a replacement that overlaps their interior, on every path that moves them.

Each property compares the tracked region with a brute-force model that labels every character
"in the region" or not: an edit's new characters are in the region when any character it
replaced was, or, for a pure insertion, when both its neighbours are, or when it is typed at the
open point while one neighbour is (typing that continues a rewrite: the open point is where the
last edit that replaced or deleted region characters, or was typed inside the region or at the
open point, ended; any other edit closes it). An empty region is a point, and an empty or
crossed region (what replacing a whole region leaves) absorbs whatever touches its closed span,
as :func:`capture.edits.regions.is_outside` says. A changeset applied in one go neither consults
nor leaves an open point.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from capture.edits.region_index import RegionIndex
from capture.edits.regions import (
    Edit,
    Region,
    apply_changeset,
    apply_edit,
    is_outside,
    track,
    track_all,
    track_changeset,
)

PROPERTY = settings(max_examples=400, deadline=None)


# ----------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Model:
    text: str
    inside: tuple[bool, ...]
    point: int  # where the region sits while it holds no character
    greedy: bool  # empty or crossed: absorbs edits touching its closed span
    open_at: int | None = None  # where the last edit into the region ended (typing continues)

    @classmethod
    def of(cls, text: str, region: Region) -> Model:
        lo, hi = region.span()
        inside = tuple(lo <= i < hi for i in range(len(text)))
        return cls(text, inside, lo, region.start >= region.end)

    def span(self) -> tuple[int, int]:
        marked = [i for i, flag in enumerate(self.inside) if flag]
        if not marked:
            return self.point, self.point
        assert marked == list(range(marked[0], marked[-1] + 1)), "region not contiguous"
        return marked[0], marked[-1] + 1

    def region_text(self) -> str:
        lo, hi = self.span()
        return self.text[lo:hi]

    def absorbs(self, edit: Edit, open_at: int | None) -> bool:
        lo, hi = self.span()
        if self.greedy:
            return edit.end >= lo and edit.start <= hi
        if edit.start < edit.end:
            return any(self.inside[edit.start : edit.end])
        a = edit.start
        before = 0 < a <= len(self.text) and self.inside[a - 1]
        after = 0 <= a < len(self.text) and self.inside[a]
        if a == open_at:
            return before or after
        return before and after

    def typed(self, edit: Edit) -> Model:
        """One edit, as a keystroke: the changeset of one edit, then the open point it leaves."""
        a, b = edit.start, edit.end
        inner = 0 < a < len(self.text) and self.inside[a - 1] and self.inside[a]
        wrote = any(self.inside[a:b]) if a < b else a == self.open_at or inner
        after = self.replace([edit], self.open_at)
        open_at = a + len(edit.text) if wrote else None
        return Model(after.text, after.inside, after.point, after.greedy, open_at)

    def apply(self, changeset: list[Edit]) -> Model:
        """The changeset (edits strictly apart) applied in one go, labels from before it; it
        neither consults nor leaves an open point."""
        return self.replace(changeset, None)

    def replace(self, changeset: list[Edit], open_at: int | None) -> Model:
        """The changeset applied in one go; insertions at ``open_at`` continue typing."""
        lo, hi = self.span()
        held = any(self.inside)
        text = ""
        inside: list[bool] = []
        prev = 0
        point: int | None = None
        greedy = self.greedy
        for edit in changeset:
            if point is None and not held and self.point < edit.start:
                point = len(text) + self.point - prev
            text += self.text[prev : edit.start]
            inside.extend(self.inside[prev : edit.start])
            if point is None and not held and edit.start <= self.point <= edit.end:
                point = len(text)
            if held and edit.start <= lo and edit.end >= hi:
                greedy = True
                point = len(text)
            inside.extend([self.absorbs(edit, open_at)] * len(edit.text))
            text += edit.text
            prev = edit.end
        if point is None:
            point = len(text) + self.point - prev
        text += self.text[prev:]
        inside.extend(self.inside[prev:])
        return Model(text, tuple(inside), point, greedy or not any(inside))


def assert_agrees(region: Region, model: Model) -> None:
    assert region.span() == model.span()
    assert (region.start >= region.end) == model.greedy
    assert region.text_in(model.text) == model.region_text()


# ----------------------------------------------------------------------------- strategies


@st.composite
def texts_and_regions(draw: st.DrawFn) -> tuple[str, Region]:
    text = draw(st.text("ab\n", min_size=0, max_size=12))
    lo = draw(st.integers(0, len(text)))
    hi = draw(st.integers(lo, len(text)))
    kind = draw(st.sampled_from(["normal", "normal", "normal", "point", "crossed"]))
    if kind == "point" or lo == hi:
        return text, Region(lo, lo)
    return text, Region(hi, lo) if kind == "crossed" else Region(lo, hi)


def near(length: int, span: tuple[int, int]) -> st.SearchStrategy[int]:
    """Positions biased to the region's boundaries and their neighbours."""
    lo, hi = span
    marks = {0, length, lo, hi, lo - 1, lo + 1, hi - 1, hi + 1}
    return st.one_of(
        st.sampled_from(sorted(p for p in marks if 0 <= p <= length)),
        st.integers(0, length),
    )


@st.composite
def edit_near(draw: st.DrawFn, text: str, span: tuple[int, int]) -> Edit:
    start = draw(near(len(text), span))
    end = draw(near(len(text), span).filter(lambda p: p >= start))
    return Edit(start, end, draw(st.text("XY", max_size=3)))


@st.composite
def changeset_near(draw: st.DrawFn, text: str, span: tuple[int, int]) -> list[Edit]:
    """Sorted edits strictly apart: at least one untouched character between two."""
    cuts = sorted(draw(st.lists(near(len(text), span), max_size=6)))
    changeset: list[Edit] = []
    prev_end = -2
    for start, end in zip(cuts[::2], cuts[1::2], strict=False):
        if start <= prev_end:
            continue
        changeset.append(Edit(start, end, draw(st.text("XY", max_size=3))))
        prev_end = end
    return [e for e in changeset if e.start < e.end or e.text]


# ----------------------------------------------------------------------------- properties


@PROPERTY
@given(texts_and_regions(), st.data())
def test_track_all_matches_the_model(case: tuple[str, Region], data: st.DataObject) -> None:
    text, region = case
    model = Model.of(text, region)
    for _ in range(data.draw(st.integers(1, 8))):
        edit = data.draw(edit_near(model.text, region.span()))
        after = apply_edit(model.text, edit)
        region = track(region, edit)
        model = model.typed(edit)
        assert model.text == after
        assert_agrees(region, model)


@PROPERTY
@given(texts_and_regions(), st.data())
def test_track_all_is_track_in_turn_and_matches_the_model(
    case: tuple[str, Region], data: st.DataObject
) -> None:
    text, region = case
    model = Model.of(text, region)
    edits = []
    for _ in range(data.draw(st.integers(0, 6))):
        edit = data.draw(edit_near(model.text, model.span()))
        edits.append(edit)
        model = model.typed(edit)
    assert_agrees(track_all(region, edits), model)


@PROPERTY
@given(texts_and_regions(), st.data())
def test_one_edit_changesets_match_track(case: tuple[str, Region], data: st.DataObject) -> None:
    text, region = case
    edit = data.draw(edit_near(text, region.span()))
    assert track_changeset(region, [edit]) == track(region, edit)


@PROPERTY
@given(texts_and_regions(), st.data())
def test_changesets_in_one_go_match_the_model(
    case: tuple[str, Region], data: st.DataObject
) -> None:
    text, region = case
    model = Model.of(text, region)
    for _ in range(data.draw(st.integers(1, 3))):
        changeset = data.draw(changeset_near(model.text, model.span()))
        after = apply_changeset(model.text, changeset)
        region = track_changeset(region, changeset)
        model = model.apply(changeset)
        assert model.text == after
        assert_agrees(region, model)


@st.composite
def index_case(draw: st.DrawFn) -> tuple[str, list[Region], list[Edit], int]:
    text = draw(st.text("ab\n", max_size=30))
    regions = []
    for _ in range(draw(st.integers(0, 20))):
        lo = draw(st.integers(0, len(text)))
        hi = draw(st.integers(lo, min(len(text), lo + 8)))
        crossed = draw(st.integers(0, 4)) == 0
        regions.append(Region(hi, lo) if crossed else Region(lo, hi))
    edits = []
    current = text
    for _ in range(draw(st.integers(0, 10))):
        anchor = draw(st.sampled_from(regions)).span() if regions else (0, 0)
        edit = draw(edit_near(current, anchor))
        edits.append(edit)
        current = apply_edit(current, edit)
    return text, regions, edits, draw(st.integers(2, 5))


@PROPERTY
@given(index_case())
def test_region_index_agrees_with_track_and_the_model(
    case: tuple[str, list[Region], list[Edit], int],
) -> None:
    text, regions, edits, block_size = case
    index: RegionIndex[int] = RegionIndex(block_size=block_size)
    expected = dict(enumerate(regions))
    models = {k: Model.of(text, r) for k, r in expected.items()}
    for key, region in expected.items():
        index.add(key, region)
    for edit in edits:
        touched = index.apply(edit)
        assert sorted(touched) == sorted(k for k, r in expected.items() if not is_outside(r, edit))
        expected = {k: track(r, edit) for k, r in expected.items()}
        models = {k: m.typed(edit) for k, m in models.items()}
        assert dict(index.items()) == expected
        # Equality leaves the open point out: the index's single one must be each region's.
        assert {k: r.open_at for k, r in index.items()} == {
            k: r.open_at for k, r in expected.items()
        }
        assert {k: r.open_at for k, r in expected.items()} == {
            k: m.open_at for k, m in models.items()
        }
        for key, region in expected.items():
            assert_agrees(region, models[key])
    lows = [min(r.start, r.end) for _, r in index.items()]
    assert lows == sorted(lows)


@st.composite
def typing_over(draw: st.DrawFn) -> tuple[str, Region, list[Edit], str, str]:
    """A normal region, a selection overlapping its text replaced by a first key, then keys
    typed and deleted (backspace) one at a time where the typing is, as an editor that sends
    one change per keystroke reports them; with what the region must hold at the end (what
    survives of it on either side of the selection, and everything typed)."""
    text = draw(st.text("ab\n", min_size=1, max_size=12))
    s = draw(st.integers(0, len(text) - 1))
    e = draw(st.integers(s + 1, len(text)))
    a = draw(st.integers(0, e - 1))
    b = draw(st.integers(max(a + 1, s + 1), len(text)))
    first = draw(st.sampled_from("XY"))
    edits = [Edit(a, b, first)]
    typed = first
    for key in draw(st.lists(st.sampled_from(["X", "Y", "\n", "back"]), max_size=8)):
        caret = a + len(typed)
        if key == "back":
            if not typed:
                continue
            edits.append(Edit(caret - 1, caret, ""))
            typed = typed[:-1]
        else:
            edits.append(Edit(caret, caret, key))
            typed += key
    text_after = text
    for edit in edits:
        text_after = apply_edit(text_after, edit)
    held = (text[s:a] if a > s else "") + typed + (text[b:e] if b < e else "")
    return text, Region(s, e), edits, text_after, held


@PROPERTY
@given(typing_over())
def test_typing_over_the_region_key_by_key_stays_inside(
    case: tuple[str, Region, list[Edit], str, str],
) -> None:
    text, region, edits, after, held = case
    if not held:
        return  # every key typed was deleted again: nothing of the rewrite is left to hold
    assert track_all(region, edits).text_in(after) == held
    index: RegionIndex[str] = RegionIndex(block_size=2)
    index.add("r", region)
    index.add("before", Region(0, region.start))
    index.add("after", Region(region.end, len(text)))
    for edit in edits:
        index.apply(edit)
    assert index.get("r").text_in(after) == held
    model = Model.of(text, region)
    for edit in edits:
        model = model.typed(edit)
    assert model.region_text() == held


# ----------------------------------------------------------------------------- examples


LINE = "    total = sum(items)\n    return total\n"
AGENT = LINE.index("sum(items)")
WRITTEN = Region(AGENT, AGENT + len("sum(items)"))


def test_rewriting_from_inside_to_past_the_end_keeps_the_rewrite() -> None:
    start = LINE.index("items)")
    edit = Edit(start, LINE.index("\n"), "values) + 1")
    after = apply_edit(LINE, edit)
    for moved in (
        track(WRITTEN, edit),
        track_changeset(WRITTEN, [edit]),
        _through_index(WRITTEN, edit),
    ):
        assert moved.text_in(after) == "sum(values) + 1"


def test_replacing_from_before_into_the_middle_keeps_the_replacement() -> None:
    edit = Edit(LINE.index("total ="), LINE.index("items)"), "result = max(")
    after = apply_edit(LINE, edit)
    assert track(WRITTEN, edit).text_in(after) == "result = max(items)"
    assert _through_index(WRITTEN, edit).text_in(after) == "result = max(items)"


def test_wrapping_in_parentheses_leaves_the_agents_text_alone() -> None:
    edits = [Edit(WRITTEN.end, WRITTEN.end, ")"), Edit(WRITTEN.start, WRITTEN.start, "(")]
    after = apply_edit(apply_edit(LINE, edits[0]), edits[1])
    assert "(sum(items))" in after
    assert track_all(WRITTEN, edits).text_in(after) == "sum(items)"
    assert (
        track_changeset(WRITTEN, sorted(edits, key=lambda e: e.start)).text_in(after)
        == "sum(items)"
    )


def test_replacing_the_whole_region_holds_exactly_the_replacement() -> None:
    for edit in (
        Edit(WRITTEN.start, WRITTEN.end, "len(items)"),
        Edit(WRITTEN.start - 2, WRITTEN.end + 1, "= 0\n"),
    ):
        after = apply_edit(LINE, edit)
        moved = track(WRITTEN, edit)
        assert moved.start > moved.end  # crossed: it absorbs typing at either boundary
        assert moved.text_in(after) == edit.text


def test_deleting_past_an_end_shrinks_the_region_as_before() -> None:
    edit = Edit(LINE.index("items)"), LINE.index("\n"), "")
    assert track(WRITTEN, edit).text_in(apply_edit(LINE, edit)) == "sum("


def _through_index(region: Region, edit: Edit) -> Region:
    index: RegionIndex[str] = RegionIndex()
    index.add("r", region)
    index.add("before", Region(0, 2))
    index.add("after", Region(len(LINE) - 3, len(LINE)))
    index.apply(edit)
    return index.get("r")


def _typed(line: str, start: int, end: int, keys: str) -> tuple[list[Edit], str]:
    """Select ``line[start:end]`` and type ``keys`` over it, one change per key ("\b" is
    backspace), as VS Code reports it."""
    edits = [Edit(start, end, keys[0])]
    caret = start + 1
    for key in keys[1:]:
        if key == "\b":
            edits.append(Edit(caret - 1, caret, ""))
            caret -= 1
        else:
            edits.append(Edit(caret, caret, key))
            caret += 1
    for edit in edits:
        line = apply_edit(line, edit)
    return edits, line


def _through_index_all(region: Region, edits: list[Edit]) -> Region:
    index: RegionIndex[str] = RegionIndex()
    index.add("r", region)
    index.add("before", Region(0, 2))
    index.add("after", Region(len(LINE) - 3, len(LINE)))
    for edit in edits:
        index.apply(edit)
    return index.get("r")


def test_typing_over_the_end_of_the_agents_text_key_by_key_is_a_rewrite() -> None:
    edits, after = _typed(LINE, LINE.index("items)"), LINE.index("\n"), "values) + 1")
    assert "sum(values) + 1\n" in after
    assert track_all(WRITTEN, edits).text_in(after) == "sum(values) + 1"
    assert _through_index_all(WRITTEN, edits).text_in(after) == "sum(values) + 1"


def test_backspace_and_retype_at_the_open_end_stay_inside() -> None:
    edits, after = _typed(LINE, LINE.index("items)"), LINE.index("\n"), "valuz\b\bues)")
    assert track_all(WRITTEN, edits).text_in(after) == "sum(values)"
    assert _through_index_all(WRITTEN, edits).text_in(after) == "sum(values)"


def test_deleting_the_agents_last_character_and_retyping_it_stays_inside() -> None:
    end = WRITTEN.end
    edits = [Edit(end - 1, end, ""), Edit(end - 1, end - 1, "]")]
    after = apply_edit(apply_edit(LINE, edits[0]), edits[1])
    assert track_all(WRITTEN, edits).text_in(after) == "sum(items]"
    assert _through_index_all(WRITTEN, edits).text_in(after) == "sum(items]"


def test_typing_at_the_agents_end_without_rewriting_it_stays_outside() -> None:
    # A new line typed right after the agent's text, with nothing of it rewritten first.
    end = WRITTEN.end
    edits = [Edit(end + i, end + i, key) for i, key in enumerate(" or 0")]
    after = LINE[:end] + " or 0" + LINE[end:]
    assert track_all(WRITTEN, edits).text_in(after) == "sum(items)"
    assert _through_index_all(WRITTEN, edits).text_in(after) == "sum(items)"


def test_an_edit_elsewhere_closes_the_open_end() -> None:
    # Rewrite the end, edit another line, come back and type at the region's end: that last
    # typing is new text beside the agent's, not the rewrite continued.
    edits, after = _typed(LINE, LINE.index("items)"), LINE.index("\n"), "values)")
    elsewhere = Edit(len(after) - 1, len(after) - 1, "  # done")
    after = apply_edit(after, elsewhere)
    end = after.index(")\n") + 1
    edits += [elsewhere, Edit(end, end, " or 0")]
    after = apply_edit(after, edits[-1])
    assert track_all(WRITTEN, edits).text_in(after) == "sum(values)"
    assert _through_index_all(WRITTEN, edits).text_in(after) == "sum(values)"
    assert track(track_all(WRITTEN, edits[:-1]), edits[-1]).open_at is None


def test_a_changeset_neither_consults_nor_leaves_an_open_end() -> None:
    edits, after = _typed(LINE, LINE.index("items)"), LINE.index("\n"), "v")
    moved = track_all(WRITTEN, edits)
    assert moved.open_at == moved.end
    end = moved.end
    assert track_changeset(moved, [Edit(end, end, "alues")]).open_at is None
    assert (
        track_changeset(moved, [Edit(end, end, "alues")]).text_in(
            apply_edit(after, Edit(end, end, "alues"))
        )
        == "sum(v"
    )
