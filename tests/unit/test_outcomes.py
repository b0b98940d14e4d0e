from __future__ import annotations

import pytest

from capture.edits.outcomes import (
    KEPT_SIMILARITY,
    HunkObservation,
    decide,
    inserted_mask,
    measure,
    observe_hunk,
    retention,
    similarity,
)
from capture.model import Outcome, State

OLD = "    return 0\n"
NEW = "    total = sum(items)\n    return total\n"


def outcome_of(*hunks: HunkObservation, state: State = State.APPLIED) -> Outcome:
    return decide(state, measure(hunks))[0]


def test_untouched_text_is_kept() -> None:
    assert outcome_of(HunkObservation(OLD, NEW, NEW)) is Outcome.KEPT


def test_small_tweak_is_kept_large_rewrite_is_edited() -> None:
    tweak = NEW.replace("total", "totl", 1)
    assert similarity(NEW, tweak) >= KEPT_SIMILARITY
    assert outcome_of(HunkObservation(OLD, NEW, tweak)) is Outcome.KEPT
    rewrite = "    total = 0\n    for x in items:\n        total += x\n    return total\n"
    assert outcome_of(HunkObservation(OLD, NEW, rewrite)) is Outcome.EDITED


def test_old_text_back_is_undone() -> None:
    assert outcome_of(HunkObservation(OLD, NEW, OLD)) is Outcome.UNDONE


def test_agent_text_gone_is_undone() -> None:
    assert outcome_of(HunkObservation(OLD, NEW, "")) is Outcome.UNDONE
    assert outcome_of(HunkObservation("", "brand new text\n", "something else entirely\n")) is (
        Outcome.UNDONE
    )


def test_pure_deletion_undone_only_when_old_text_returns() -> None:
    assert outcome_of(HunkObservation("gone\n", "", "")) is Outcome.KEPT
    assert outcome_of(HunkObservation("gone\n", "", "gone\n")) is Outcome.UNDONE
    text = "a\ngone\nb\n"
    observed = observe_hunk(text, "gone\n", "", (2, 2))
    assert observed.old_text_adjacent
    assert outcome_of(observed) is Outcome.UNDONE


def test_lost_rejected_and_shown() -> None:
    assert outcome_of(HunkObservation(OLD, NEW, None)) is Outcome.LOST
    assert decide(State.REJECTED, None)[0] is Outcome.REJECTED
    assert decide(State.SHOWN, None)[0] is Outcome.PENDING


def test_retention_counts_only_inserted_characters() -> None:
    # The agent changed one character; keeping that character is full retention even when
    # the surrounding carried-over text is edited away.
    assert inserted_mask("abc", "abXc") == [False, False, True, False]
    assert retention("abc", "abXc", "X") == 1.0
    assert retention("abc", "abXc", "abc") == 0.0
    assert retention("", "hello", "hello world") == 1.0
    assert retention("", "hello", "help") == pytest.approx(3 / 5)


def test_measure_weights_hunks_by_size() -> None:
    big = HunkObservation("", "x" * 90, "x" * 90)
    small = HunkObservation("", "y" * 10, "")
    m = measure([big, small])
    assert m.similarity == pytest.approx(0.9)
    assert m.retention == pytest.approx(0.9)
    assert not m.old_back


def test_measure_over_large_texts_uses_lines() -> None:
    new = "".join(f"line {i}\n" for i in range(20_000))
    region = new.replace("line 5\n", "line five\n")
    m = measure([HunkObservation("", new, region)])
    assert m.similarity > 0.99 and m.retention > 0.99


def test_a_gone_file_is_undone_only_when_the_agent_created_it() -> None:
    from capture.edits.regions import Region
    from capture.edits.tracking import TrackedHunk, measure_gone

    whole = [TrackedHunk("", "print('hi')\n", Region(0, 12))]
    edited = [TrackedHunk("x = 0\n", "x = 1\n", Region(3, 9), "a = 1\n", "b = 2\n")]
    assert decide(State.APPLIED, measure_gone(whole, created_file=True))[0] is Outcome.UNDONE
    # The same hunk over a file that existed (a whole-file write whose original the agent
    # did not send): its old content is not back.
    assert decide(State.APPLIED, measure_gone(whole, created_file=False))[0] is Outcome.LOST
    assert decide(State.APPLIED, measure_gone(edited, created_file=False))[0] is Outcome.LOST
    assert decide(State.APPLIED, measure_gone([], created_file=True))[0] is Outcome.LOST
