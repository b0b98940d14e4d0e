"""A file's text at a past moment, from the changes a watcher recorded."""

from __future__ import annotations

from capture.edits.history import Change, Coverage, text_at

CHANGES = [Change(10.0, "agent"), Change(15.0, "restored")]


def test_the_last_change_before_the_moment_is_what_the_file_held() -> None:
    span = Coverage(9.0, 30.0)
    assert text_at(CHANGES, 12.0, span) == (True, "agent")
    assert text_at(CHANGES, 15.0, span) == (True, "restored")
    assert text_at(CHANGES, 29.0, span) == (True, "restored")


def test_outside_the_watchers_life_nothing_is_known() -> None:
    assert text_at(CHANGES, 10.5, Coverage(9.0, 11.0)) == (True, "agent")
    assert text_at(CHANGES, 13.0, Coverage(9.0, 11.0)) == (False, None)  # killed at 11
    assert text_at(CHANGES, 12.0, None) == (False, None)


def test_before_the_watcher_first_read_the_file_nothing_is_known() -> None:
    assert text_at(CHANGES, 9.5, Coverage(9.0, 30.0)) == (False, None)
    # a change recorded by an earlier watcher says nothing for this one's span
    assert text_at(CHANGES, 12.0, Coverage(11.0, 30.0)) == (False, None)
    assert text_at(CHANGES, 16.0, Coverage(11.0, 30.0)) == (True, "restored")


def test_a_later_measure_of_the_file_counts() -> None:
    span = Coverage(9.0, 30.0)
    assert text_at(CHANGES, 20.0, span, Change(18.0, "measured")) == (True, "measured")
    assert text_at(CHANGES, 20.0, span, Change(12.0, "older")) == (True, "restored")
    assert text_at(CHANGES, 20.0, span, Change(21.0, "after")) == (True, "restored")


def test_a_deleted_file_is_known_to_hold_nothing() -> None:
    changes = [Change(10.0, "agent"), Change(12.0, None)]
    assert text_at(changes, 13.0, Coverage(9.0, 30.0)) == (True, None)
