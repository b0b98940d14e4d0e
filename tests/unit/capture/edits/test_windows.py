"""Checkpoint windows and when a checkpoint is late."""

from __future__ import annotations

from capture.edits.windows import LATE_AFTER, lateness, parse_windows


def test_a_checkpoint_measured_at_its_window_is_on_time() -> None:
    assert lateness(100.0, 100.0) is None
    assert lateness(100.0, 100.0 + LATE_AFTER) is None


def test_a_checkpoint_measured_later_says_by_how_much() -> None:
    assert lateness(100.0, 170.5) == 70.5


def test_windows_are_sorted_and_named_canonically() -> None:
    assert [w.label for w in parse_windows("2m,30s,120s")] == ["30s", "2m"]
