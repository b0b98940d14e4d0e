"""Where an agent's hunks sit right after its edit: rebuilt from the payload, pinned by the
diff against the pre-image, carried to a later text."""

from __future__ import annotations

from capture.edits.hunks import LocatedHunk
from capture.edits.placement import carry, context_in_pre_image, pin, rebuild, without_context
from capture.edits.regions import Region
from capture.model import HunkInput

SETTINGS = "limit = 5\nretries = 3\ntimeout = 10\n"


def test_rebuild_applies_the_edit_and_knows_where_it_went() -> None:
    rebuilt = rebuild(SETTINGS, [HunkInput("= 3\n", "= 5\n")])
    assert rebuilt is not None
    assert rebuilt.text == "limit = 5\nretries = 5\ntimeout = 10\n"
    (hunk,) = rebuilt.hunks
    assert hunk.start == rebuilt.text.index("retries") + len("retries ")


def test_rebuild_applies_hunks_in_order_and_shifts_earlier_offsets() -> None:
    rebuilt = rebuild(
        SETTINGS, [HunkInput("timeout = 10", "timeout = 30"), HunkInput("limit = 5", "limit = 50")]
    )
    assert rebuilt is not None
    assert rebuilt.text == "limit = 50\nretries = 3\ntimeout = 30\n"
    assert [
        rebuilt.text[h.start : h.start + len(h.new_text)]
        for h in rebuilt.hunks
        if h.start is not None
    ] == [
        "timeout = 30",
        "limit = 50",
    ]


def test_rebuild_refuses_to_guess() -> None:
    assert rebuild(SETTINGS, [HunkInput("absent", "x")]) is None
    assert rebuild("a = 1\na = 1\n", [HunkInput("a = 1\n", "a = 2\n")]) is None  # twice, no line
    assert rebuild(SETTINGS, [HunkInput("", "new\n")]) is None  # an insertion with no position


def test_rebuild_follows_the_files_crlf_line_ends() -> None:
    rebuilt = rebuild("a = 1\r\nb = 2\r\n", [HunkInput("b = 2\n", "b = 3\n")])
    assert rebuilt is not None and rebuilt.text == "a = 1\r\nb = 3\r\n"


def test_pin_places_ambiguous_new_text_where_the_file_changed() -> None:
    after = "limit = 5\nretries = 5\ntimeout = 10\n"
    (pinned,) = pin(after, [HunkInput("= 3\n", "= 5\n")], SETTINGS)
    assert pinned is not None and pinned.start == after.index("retries = 5") + len("retries ")


def test_pin_leaves_unplaced_what_nothing_decides() -> None:
    after = "limit = 5\nretries = 5\ntimeout = 10\n"
    assert pin(after, [HunkInput("= 3\n", "= 5\n")], None) == [None]
    unique = HunkInput("retries = 3", "retries = 4")
    assert pin("retries = 4\n", [unique], None) == [unique]


def test_an_unplaced_hunk_keeps_the_lines_around_its_old_text() -> None:
    before, after = context_in_pre_image(SETTINGS, HunkInput("retries = 3\n", "retries = 5\n"))
    assert (before, after) == ("limit = 5\n", "timeout = 10\n")


def test_without_context_says_how_much_it_cut_at_the_head() -> None:
    hunk = HunkInput("def f():\n    return 0\n", "def f():\n    return 1\n", start=10)
    trimmed, cut = without_context(hunk)
    assert (trimmed.old_text, trimmed.new_text, cut, trimmed.start) == (
        "    return 0\n",
        "    return 1\n",
        len("def f():\n"),
        10 + len("def f():\n"),
    )


def test_carry_moves_a_hunk_to_a_later_text() -> None:
    text = "x = 1\ny = 2\n"
    located = [LocatedHunk("y = 1\n", "y = 2\n", (6, 12))]
    (moved,) = carry(located, text, "# header\n" + text)
    assert moved.span == (15, 21)


def test_carry_keeps_the_crossed_ends_of_a_hunk_replaced_whole() -> None:
    located = [LocatedHunk("0", "sum(items)", (11, 21))]
    text = "    return sum(items)\n"
    (moved,) = carry(located, text, "    return total\n")
    assert moved.span is not None
    region = Region(*moved.span)
    assert region.start > region.end and region.text_in("    return total\n") == "total"
