from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capture.edits.hunks import context_around, count_change, line_offset, locate
from capture.edits.unidiff import parse_unified_diff
from capture.errors import InputError
from capture.model import HunkInput, State
from capture.recording.propose_input import parse_proposal


def test_unified_diff_hunks_drop_context() -> None:
    diff = (
        "--- a/src/m.py\n+++ b/src/m.py\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n-d\n e\n"
        "@@ -10,2 +10,3 @@\n x\n+y\n z\n"
    )
    target, hunks = parse_unified_diff(diff)
    assert target == "src/m.py"
    assert [(h.old_text, h.new_text, h.line) for h in hunks] == [
        ("b\n", "B\n", 2),
        ("d\n", "", 4),
        ("", "y\n", 11),
    ]


def test_unified_diff_without_hunks_is_an_error() -> None:
    with pytest.raises(InputError):
        parse_unified_diff("just text")


def test_no_newline_marker() -> None:
    _, hunks = parse_unified_diff("@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n")
    assert (hunks[0].old_text, hunks[0].new_text) == ("a", "b\n")


def test_parse_proposal_defaults(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    raw = json.dumps({"file": "a.py", "old_text": "1", "new_text": "2"}).encode()
    proposal = parse_proposal(raw, tmp_path)
    assert proposal.path == str((tmp_path / "a.py").resolve())
    assert proposal.workspace == str(tmp_path.resolve())
    assert proposal.state is State.APPLIED and proposal.agent == "cli"


def test_parse_proposal_rejects_mixed_hunk_forms(tmp_path: Path) -> None:
    raw = json.dumps({"file": "a.py", "new_text": "2", "diff": "@@ -1 +1 @@\n-a\n+b\n"})
    with pytest.raises(InputError, match="exactly one"):
        parse_proposal(raw.encode(), tmp_path)


def test_locate_prefers_given_line_then_nearest() -> None:
    text = "x = 1\ny = 2\nx = 1\n"
    (first,) = locate(text, [HunkInput("", "x = 1\n", line=3)])
    assert first.span == (12, 18)
    (found,) = locate(text, [HunkInput("", "y = 2\n")])
    assert found.span == (6, 12)
    assert found.context_before == "x = 1\n" and found.context_after == "x = 1\n"
    (missing,) = locate(text, [HunkInput("", "zzz")])
    assert missing.span is None


def test_line_offset_is_where_a_line_starts_clamped_to_the_text() -> None:
    text = "ab\ncd\n\nef"
    assert [line_offset(text, n) for n in (-1, 0, 1, 2, 3, 4, 5, 9)] == [0, 0, 0, 3, 6, 7, 9, 9]
    assert line_offset("", 3) == 0
    assert line_offset("x\n", 2) == 2


@given(st.text(alphabet="ab\n", max_size=40), st.integers(min_value=-2, max_value=45))
def test_line_offset_follows_the_line_breaks(text: str, line: int) -> None:
    offset = line_offset(text, line)
    breaks = text.count("\n")
    if line - 1 > breaks:
        assert offset == len(text)  # past the last line
    else:
        assert text[:offset].count("\n") == max(line - 1, 0)
        assert offset == 0 or text[offset - 1] == "\n"


def test_context_is_three_lines() -> None:
    text = "".join(f"{c}\n" for c in "abcdefgh")
    assert context_around(text, 8, 10) == ("b\nc\nd\n", "f\ng\nh\n")


def test_count_change() -> None:
    change = count_change("a\nb\nc\n", "a\nB\nc\nd\n")
    assert (change.lines_added, change.lines_removed) == (2, 1)
    assert (change.chars_added, change.chars_removed) == (3, 1)
