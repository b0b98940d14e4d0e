"""Hunks from the shapes agents describe edits in, and fitting them to the file on disk."""

from __future__ import annotations

from capture.edits.hunks import locate
from capture.hooks.agents.fields import exit_code_in
from capture.hooks.agents.patches import (
    fit_hunks,
    hunks_between,
    parse_apply_patch,
    structured_patch_hunks,
    trim_context,
)
from capture.model import HunkInput

PATCH = """*** Begin Patch
*** Add File: docs/notes.md
+# Notes
+
+Rounding is half-up.
*** Update File: src/totals.py
*** Move to: src/money.py
@@ def tax(subtotal, rate):
-    return round(subtotal * rate, 2)
+    return (subtotal * rate).quantize(CENT, rounding=ROUND_HALF_UP)
@@ def total(lines):
     result = 0
-    # old comment
     for line in lines:
*** Delete File: src/legacy.py
*** End Patch
"""


def test_apply_patch_files() -> None:
    add, update, delete = parse_apply_patch(PATCH)
    assert (add.action, add.path, add.content) == (
        "add",
        "docs/notes.md",
        "# Notes\n\nRounding is half-up.\n",
    )
    assert add.hunks == [HunkInput("", add.content, line=1)]
    assert (update.action, update.path, update.move_to) == (
        "update",
        "src/totals.py",
        "src/money.py",
    )
    assert update.hunks == [
        HunkInput(
            "    return round(subtotal * rate, 2)\n",
            "    return (subtotal * rate).quantize(CENT, rounding=ROUND_HALF_UP)\n",
        ),
        # a pure deletion keeps the line before it, so it has text to be found by
        HunkInput("    result = 0\n    # old comment\n", "    result = 0\n"),
    ]
    assert (delete.action, delete.path) == ("delete", "src/legacy.py")


def test_structured_patch_hunks_carry_new_file_lines() -> None:
    patch = [
        {
            "oldStart": 4,
            "oldLines": 4,
            "newStart": 4,
            "newLines": 4,
            "lines": [" def tax(a):", "-    return 1", "+    return 2", " ", "-x = 1", "+x = 2"],
        }
    ]
    assert structured_patch_hunks(patch) == [
        HunkInput("    return 1\n", "    return 2\n", line=5),
        HunkInput("x = 1\n", "x = 2\n", line=7),
    ]
    assert structured_patch_hunks("nonsense") == []


def test_hunks_between_whole_files() -> None:
    old = "a\nb\nc\nd\ne\n"
    new = "a\nB\nc\nd\ne\nf\n"
    hunks = hunks_between(old, new)
    assert [(h.old_text, h.new_text) for h in hunks] == [("b", "B"), ("", "f\n")]
    for hunk in hunks:
        assert hunk.start is not None
        assert new[hunk.start : hunk.start + len(hunk.new_text)] == hunk.new_text


def test_trim_context_drops_repeated_whole_lines() -> None:
    hunk = HunkInput("def f():\n    return 1\n# end\n", "def f():\n    return 2\n# end\n", line=3)
    assert trim_context(hunk) == HunkInput("    return 1\n", "    return 2\n", line=4)
    # nothing left to find it by: unchanged
    deletion = HunkInput("def f():\n    pass\n", "def f():\n")
    assert trim_context(deletion) == deletion
    # a change within a line is not trimmed
    inline = HunkInput("x = 1", "x = 2")
    assert trim_context(inline) == inline


def test_fit_hunks_to_the_file() -> None:
    text = "line one\r\nline two\r\nlast line"
    hunks = [HunkInput("line 2\n", "line two\n"), HunkInput("end\n", "last line\n")]
    fitted = fit_hunks(text, hunks)
    assert [h.new_text for h in fitted] == ["line two\r\n", "last line"]
    located = locate(text, fitted)
    assert all(h.span is not None for h in located)
    # pinned to the line it names, not the nearest occurrence to the line's start
    text = "import ROUND\n\nx = f(rounding=ROUND)\n"
    (hunk,) = fit_hunks(text, [HunkInput("", "ROUND", line=3)])
    assert hunk.start == text.rindex("ROUND")


def test_exit_codes_in_tool_output() -> None:
    assert exit_code_in("Exit code 2\nboom") == 2
    assert exit_code_in("Error: Exit code 1\nx") == 1
    assert exit_code_in("Command: x\nExit Code: 3\nSignal: (none)") == 3
    assert exit_code_in("Wall time: 1s\nProcess exited with code 1\nOutput:") == 1
    assert exit_code_in("all good") is None
