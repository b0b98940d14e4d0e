"""The capture/* params: what is accepted, and the one line said about what is not."""

from __future__ import annotations

import re

import pytest

from capture.model import State
from server.params import (
    ParamsError,
    parse_decision,
    parse_proposal,
    parse_test_run,
    parse_undo,
)

URI = "file:///w/a.py"
RANGE = {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}


def test_one_hunk_or_several() -> None:
    one = parse_proposal({"uri": URI, "oldText": "a", "newText": "b", "range": RANGE})
    assert one.state is State.APPLIED and one.agent == "editor"
    assert [(h.old_text, h.new_text, h.range.start_line) for h in one.hunks] == [("a", "b", 1)]
    many = parse_proposal(
        {
            "uri": URI,
            "state": "shown",
            "id": "x",
            "agent": "a",
            "turnId": "t",
            "edits": [{"newText": "b"}, {"oldText": "c", "newText": "", "range": RANGE}],
        }
    )
    assert many.state is State.SHOWN and many.editor_id == "x" and many.turn_id == "t"
    assert [h.range for h in many.hunks][0] is None


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([], "params must be an object"),
        ({"newText": "b"}, "uri is required"),
        ({"uri": URI}, "give newText (one hunk) or edits (several)"),
        ({"uri": URI, "newText": "b", "state": "maybe"}, "state must be one of"),
        ({"uri": URI, "edits": []}, "edits must be a non-empty list"),
        ({"uri": URI, "newText": 5}, "each edit needs a newText string"),
        ({"uri": URI, "newText": "", "oldText": ""}, "the edits change nothing"),
        ({"uri": URI, "newText": "b", "range": {"start": {"line": "1"}}}, "must be integers"),
        ({"uri": URI, "newText": "x" * (9 * 1024 * 1024)}, "newText is longer than"),
    ],
)
def test_bad_proposals(params: object, message: str) -> None:
    with pytest.raises(ParamsError, match=re.escape(message)):
        parse_proposal(params)


def test_negative_positions_are_clamped() -> None:
    rng = {"start": {"line": -4, "character": -1}, "end": {"line": 0, "character": 3}}
    hunk = parse_proposal({"uri": URI, "newText": "b", "range": rng}).hunks[0]
    assert (hunk.range.start_line, hunk.range.start_character) == (0, 0)


def test_decision_undo_and_test_run() -> None:
    assert parse_decision({"id": "x", "accepted": False}).decided_by == "user"
    with pytest.raises(ParamsError, match="accepted must be true or false"):
        parse_decision({"id": "x", "accepted": "yes"})
    with pytest.raises(ParamsError, match="give id"):
        parse_decision({"accepted": True})
    assert parse_undo({"uri": URI}).reason == "undo"
    with pytest.raises(ParamsError, match="reason must be undo or redo"):
        parse_undo({"uri": URI, "reason": "oops"})
    run = parse_test_run(
        {"command": "pytest", "startedAt": "2026-12-02T10:00:00Z", "failingIds": ["t::a"]}
    )
    assert run.started_at == 1796205600.0 and run.failing_ids == ("t::a",)
    with pytest.raises(ParamsError, match="failingIds must be a list of strings"):
        parse_test_run({"command": "pytest", "failingIds": [1]})
    with pytest.raises(ParamsError, match="durationS must be a non-negative number"):
        parse_test_run({"command": "pytest", "durationS": float("nan")})
