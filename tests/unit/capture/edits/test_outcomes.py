from __future__ import annotations

import pytest

from capture.edits.hunks import context_around
from capture.edits.outcomes import (
    KEPT_SIMILARITY,
    RULES_VERSION,
    SUBSTANTIAL_CHARS,
    HunkObservation,
    decide,
    inserted_mask,
    measure,
    observe_hunk,
    retention,
    rules_label,
    similarity,
)
from capture.model import Outcome, State

OLD = "    return 0\n"
NEW = "    total = sum(items)\n    return total\n"


def outcome_of(*hunks: HunkObservation, state: State = State.APPLIED) -> Outcome:
    return decide(state, measure(hunks))[0]


def verdict(*hunks: HunkObservation) -> tuple[Outcome, str]:
    return decide(State.APPLIED, measure(hunks))


def deletion_seen(
    after_edit: str, point: int, old_text: str, now: str, span: tuple[int, int]
) -> HunkObservation:
    """A pure deletion observed in `now`, with the context recorded in `after_edit`."""
    context = context_around(after_edit, point, point)
    return observe_hunk(now, old_text, "", span, context)


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
    assert verdict(HunkObservation(OLD, NEW, "")) == (Outcome.UNDONE, "agent's text removed")


def test_agent_text_replaced_by_other_text_is_rewritten() -> None:
    assert verdict(HunkObservation("", "brand new text\n", "something else entirely\n")) == (
        Outcome.EDITED,
        "rewritten",
    )


def test_three_char_insertion_rewritten_by_the_user_is_edited() -> None:
    old, new = "    sleep()\n", "    sleep(0.5)\n"
    rewrite = "    sleep(config.backoff_seconds)\n"
    assert retention(old, new, rewrite) < 0.10  # by characters alone this was "undone"
    assert verdict(HunkObservation(old, new, rewrite)) == (Outcome.EDITED, "rewritten")


def test_three_char_insertion_changed_slightly_is_judged_by_similarity() -> None:
    old, new = "x = f(a)\n", "x = f(a, b)\n"
    outcome, reason = verdict(HunkObservation(old, new, "x = f(a, q)\n"))
    assert outcome in (Outcome.KEPT, Outcome.EDITED) and reason.startswith("similarity")


def test_agent_text_replaced_by_the_old_text_is_undone() -> None:
    assert verdict(HunkObservation(OLD, NEW, OLD)) == (Outcome.UNDONE, "old text back")


def test_agent_text_deleted_leaving_only_whitespace_is_undone() -> None:
    assert verdict(HunkObservation(OLD, NEW, "    \n\n")) == (
        Outcome.UNDONE,
        "agent's text removed",
    )
    assert verdict(HunkObservation("", "abc", "  ")) == (Outcome.UNDONE, "agent's text removed")


def test_a_few_stray_characters_in_place_of_the_agent_text_are_not_substantial() -> None:
    assert SUBSTANTIAL_CHARS > 3
    assert verdict(HunkObservation(OLD, NEW, "    # x\n"))[0] is Outcome.UNDONE


def test_wrap_of_agent_text_in_parentheses_is_kept_or_edited() -> None:
    old, new = "    return a\n", "    return a + offset * scale\n"
    wrapped = "    return (a + offset * scale)\n"
    outcome, reason = verdict(HunkObservation(old, new, wrapped))
    assert outcome is Outcome.KEPT, reason


def test_duplicate_line_deletion_with_nothing_changed_after_is_kept() -> None:
    before = "import os\nimport os\nimport sys\n"
    after = "import os\nimport sys\n"  # the second `import os` deleted, at offset 10
    seen = deletion_seen(after, 10, "import os\n", after, (10, 10))
    assert not seen.old_text_adjacent
    assert verdict(seen)[0] is Outcome.KEPT
    assert before.count("import os\n") == 2
    blank = "a\n\n\nb\n"
    trimmed = "a\n\nb\n"  # one blank line deleted at offset 2
    assert verdict(deletion_seen(trimmed, 2, "\n", trimmed, (2, 2)))[0] is Outcome.KEPT
    assert blank != trimmed


def test_deletion_whose_old_text_is_typed_back_is_undone() -> None:
    after = "a\nb\nc\n"  # "gone\n" deleted at offset 2
    typed_back = "a\ngone\nb\nc\n"
    # the point stayed before the typed text, or moved past it: both are the text back
    for span in ((2, 2), (7, 7)):
        seen = deletion_seen(after, 2, "gone\n", typed_back, span)
        assert verdict(seen) == (Outcome.UNDONE, "old text back"), span
    # and a twin typed back beside the twin that stayed
    dup_after = "x = 1\nimport os\nrun()\n"  # second "import os\n" deleted at offset 16
    dup_now = "x = 1\nimport os\nimport os\nrun()\n"
    seen = deletion_seen(dup_after, 16, "import os\n", dup_now, (16, 16))
    assert verdict(seen) == (Outcome.UNDONE, "old text back")


def test_deletion_tracked_without_context_reads_its_neighbours_as_version_1_did() -> None:
    from capture.edits.regions import Region
    from capture.edits.tracking import TrackedHunk, measure_hunks

    # A past edit judged from one later text carries no context: the old text right beside
    # the point is all there is to go on.
    hunk = TrackedHunk("drop = 2\n", "", Region(9, 9))
    typed_back = "keep = 1\ndrop = 2\nlast = 3\n"
    assert decide(State.APPLIED, measure_hunks(typed_back, [hunk])) == (
        Outcome.UNDONE,
        "old text back",
    )
    untouched = measure_hunks("keep = 1\nlast = 3\n", [hunk])
    assert decide(State.APPLIED, untouched)[0] is Outcome.KEPT


def test_deletion_with_new_text_written_in_its_place_is_rewritten() -> None:
    seen = HunkObservation("old_call(x)\n", "", "replacement_call(y)\n")
    assert verdict(seen) == (Outcome.EDITED, "rewritten")


def test_reasons_are_short_and_stable() -> None:
    assert verdict(HunkObservation(OLD, NEW, NEW)) == (Outcome.KEPT, "similarity 1.00 >= 0.90")
    trimmed = "    total = sum(items)\n"
    outcome, reason = verdict(HunkObservation(OLD, NEW, trimmed))
    assert outcome is Outcome.EDITED and reason.startswith("similarity ") and "< 0.90" in reason


def test_earlier_labels_keep_their_version() -> None:
    assert RULES_VERSION == 3
    assert rules_label(2) == "rules v2"
    assert rules_label(1) == "rules v1"
    assert rules_label(None) == "rules v1"  # rows from before versions were stored
    assert rules_label(RULES_VERSION) == "rules v3"


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
