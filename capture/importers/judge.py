"""What became of a past edit, judged from one later text of its file (the file now, or as a
later commit has it): its hunks found again by their text and the lines around them, measured
with the same rules as live checkpoints."""

from __future__ import annotations

from collections.abc import Sequence

from capture.edits.hunks import LocatedHunk, locate
from capture.edits.outcomes import Measurement, decide
from capture.edits.regions import Region
from capture.edits.relocate import relocate
from capture.edits.tracking import TrackedHunk, measure_gone, measure_hunks
from capture.hooks.agents.patches import fit_hunks
from capture.model import HunkInput, Outcome, State

__all__ = ["Context", "contexts_from_after", "judge"]

#: lines before and after a hunk; None where they are not known
Context = tuple[str | None, str | None]


def contexts_from_after(after: str, hunks: Sequence[HunkInput]) -> list[Context]:
    """The lines around each hunk in the file as the edit left it."""
    return [
        (h.context_before, h.context_after) if h.span else (None, None)
        for h in locate(after, fit_hunks(after, list(hunks)))
    ]


def _only(text: str, needle: str) -> int | None:
    first = text.find(needle)
    if first < 0 or text.find(needle, first + 1) >= 0:
        return None
    return first


def _whole_file(text: str, context: Context) -> tuple[int, int] | None:
    """The whole text, for a hunk that was the whole file (a Write): from the file's start to
    its end, but for the blank end it had. Such a region moves with nothing around it, so a
    later change to it (the agent's own next Edit included) measures it, never loses it."""
    before, after = context
    if before != "" or after is None or after.strip():
        return None
    end = len(text) - len(after) if after and text.endswith(after) else len(text)
    return 0, end


def _find(text: str, hunk: HunkInput, context: Context) -> tuple[int, int] | None:
    before, after = context
    if before is not None and after is not None:
        whole = _whole_file(text, context)
        if whole is not None:
            return whole
        region = relocate(text, hunk.new_text, before, after)
        return None if region is None else region.span()
    if hunk.new_text:
        at = _only(text, hunk.new_text)
        if at is not None:
            return at, at + len(hunk.new_text)
        if hunk.old_text and hunk.new_text not in text:
            # without the surrounding lines, only an unmistakable return of the old text counts
            at = _only(text, hunk.old_text)
            if at is not None:
                return at, at + len(hunk.old_text)
    return None


def judge(
    text: str | None,
    hunks: Sequence[HunkInput],
    contexts: Sequence[Context],
    *,
    gone: bool = False,
    created_file: bool = False,
) -> tuple[list[LocatedHunk], Measurement, Outcome, str]:
    """The hunks as found in `text` (None: the file cannot be read; `gone`: it does not
    exist), what they measure, the outcome and its reason, by the rules of live edits."""
    fitted = fit_hunks(text, list(hunks)) if text is not None else list(hunks)
    located: list[LocatedHunk] = []
    tracked: list[TrackedHunk] = []
    for hunk, context in zip(fitted, contexts, strict=True):
        span = None if text is None else _find(text, hunk, context)
        before, after = context
        located.append(LocatedHunk(hunk.old_text, hunk.new_text, span, before or "", after or ""))
        region = None if span is None else Region(*span)
        tracked.append(TrackedHunk(hunk.old_text, hunk.new_text, region))
    if gone:
        measurement = measure_gone(tracked, created_file=created_file)
    else:
        measurement = measure_hunks(text, tracked)
    outcome, reason = decide(State.APPLIED, measurement)
    return located, measurement, outcome, reason
