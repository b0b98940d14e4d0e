"""Where an agent's hunks sit in the text right after its edit, decided from what the payload
carries rather than by searching for the first occurrence of the new text.

- `rebuild`: the file before the edit and the edit's hunks give the text the edit produced and
  each hunk's exact offset in it (Claude Code's `originalFile` with its old/new strings).
- `pin`: a hunk whose new text occurs more than once is placed where the file changed between
  the text before the edit and the text after it (the diff against the pre-image), or on the
  line the payload names; one that nothing can place is left unplaced, never guessed.
- `carry`: hunks placed in one text, moved to a later text through the diff between the two
  (the moment the hook fired, then the disk as the queue found it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from capture.edits.hunks import LocatedHunk, context_around, line_offset
from capture.edits.regions import Region, track_changeset
from capture.edits.textdiff import diff_edits
from capture.model import HunkInput

__all__ = ["Rebuilt", "carry", "context_in_pre_image", "pin", "rebuild", "without_context"]


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """The text an edit produced and its hunks, each with its offset in that text."""

    text: str
    hunks: list[HunkInput]


def _occurrences(text: str, needle: str, limit: int = 64) -> list[int]:
    found: list[int] = []
    at = text.find(needle)
    while at >= 0 and len(found) < limit:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def _crlf(hunk: HunkInput, text: str) -> HunkInput:
    """The hunk spelt with the file's CRLF line ends when the payload used LF."""
    if "\r\n" not in text or "\r\n" in hunk.old_text + hunk.new_text:
        return hunk
    return replace(
        hunk,
        old_text=hunk.old_text.replace("\n", "\r\n"),
        new_text=hunk.new_text.replace("\n", "\r\n"),
    )


def _hint(text: str, hunk: HunkInput) -> int | None:
    if hunk.start is not None:
        return hunk.start
    if hunk.line is not None:
        return line_offset(text, hunk.line)
    return None


def rebuild(before: str, hunks: Sequence[HunkInput]) -> Rebuilt | None:
    """Apply `hunks` in order to `before`. None when a hunk cannot be applied without doubt:
    its old text is absent, or occurs several times with no position to choose by, or it is
    an insertion with no position."""
    text = before
    placed: list[HunkInput] = []
    starts: list[int | None] = []
    for raw in hunks:
        hunk = raw if raw.old_text in text else _crlf(raw, text)
        hint = _hint(text, hunk)
        if hunk.old_text:
            found = _occurrences(text, hunk.old_text)
            if not found:
                return None
            if len(found) == 1:
                at = found[0]
            elif hint is None:
                return None
            else:
                at = min(found, key=lambda p: abs(p - hint))
        elif hint is not None and 0 <= hint <= len(text):
            at = hint
        else:
            return None
        end = at + len(hunk.old_text)
        delta = len(hunk.new_text) - len(hunk.old_text)
        for i, start in enumerate(starts):
            if start is None:
                continue
            if start >= end:
                starts[i] = start + delta
            elif start + len(placed[i].new_text) > at:
                starts[i] = None  # a later hunk rewrote this one's text: no offset is true
        text = text[:at] + hunk.new_text + text[end:]
        placed.append(hunk)
        starts.append(at)
    return Rebuilt(
        text,
        [without_context(replace(h, start=s))[0] for h, s in zip(placed, starts, strict=True)],
    )


def without_context(hunk: HunkInput) -> tuple[HunkInput, int]:
    """The replacement without the whole lines it leaves unchanged at either end (agents often
    repeat a line around what they change, to make old_string unique), and how many characters
    of new text it lost at its head. A hunk that would be left with no new text keeps them:
    they are what it is found by."""
    if not hunk.old_text or not hunk.new_text:
        return hunk, 0
    old = hunk.old_text.splitlines(keepends=True)
    new = hunk.new_text.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) - 1 and old[head] == new[head] and old[head][-1:] == "\n":
        head += 1
    tail = 0
    while (
        tail < min(len(old), len(new)) - head - 1
        and old[-1 - tail] == new[-1 - tail]
        and old[-2 - tail][-1:] == "\n"
    ):
        tail += 1
    if not head and not tail:
        return hunk, 0
    old_mid = "".join(old[head : len(old) - tail])
    new_mid = "".join(new[head : len(new) - tail])
    if not new_mid or old_mid == new_mid:
        return hunk, 0
    skipped = sum(len(line) for line in new[:head])
    line = None if hunk.line is None else hunk.line + head
    start = None if hunk.start is None else hunk.start + skipped
    return HunkInput(old_mid, new_mid, start=start, line=line), skipped


def _changed_ranges(before: str, text: str) -> list[tuple[int, int]]:
    """The stretches of `text` an edit of `before` wrote (in `text`'s coordinates)."""
    ranges = []
    shift = 0
    for edit in diff_edits(before, text):
        lo = edit.start + shift
        ranges.append((lo, lo + len(edit.text)))
        shift += edit.delta
    return ranges


def pin(text: str, hunks: Sequence[HunkInput], before: str | None) -> list[HunkInput | None]:
    """Each hunk with its offset in `text` when its new text is ambiguous there; None for a
    hunk nothing places (several occurrences, no pre-image or line to choose by). A hunk whose
    new text occurs once, or that already has an offset or a line, is returned as it is."""
    changed: list[tuple[int, int]] | None = None
    result: list[HunkInput | None] = []
    for hunk in hunks:
        if hunk.start is not None or not hunk.new_text:
            result.append(hunk)
            continue
        found = _occurrences(text, hunk.new_text)
        if len(found) <= 1:
            result.append(hunk)
            continue
        if before is not None:
            changed = changed if changed is not None else _changed_ranges(before, text)
            size = len(hunk.new_text)
            touching = [
                at for at in found if any(lo <= at + size and at <= hi for lo, hi in changed)
            ]
            if len(touching) > 1 and hunk.line is not None:
                line_at = line_offset(text, hunk.line)
                touching = [min(touching, key=lambda p: abs(p - line_at))]
            if len(touching) == 1:
                result.append(replace(hunk, start=touching[0]))
                continue
        result.append(hunk if hunk.line is not None else None)
    return result


def context_in_pre_image(before: str | None, hunk: HunkInput) -> tuple[str, str]:
    """The lines around a hunk's old text in the file before the edit: what an unplaced hunk
    keeps, so that relocation can find its new text between them later."""
    if before is None or not hunk.old_text:
        return "", ""
    found = _occurrences(before, hunk.old_text, limit=2)
    if len(found) != 1:
        return "", ""
    return context_around(before, found[0], found[0] + len(hunk.old_text))


def carry(located: Sequence[LocatedHunk], text: str, later: str) -> list[LocatedHunk]:
    """Hunks placed in `text`, moved to `later` (contexts stay those of the moment of the
    edit: they are what the hunk was written between). A carried span is a region's two ends,
    `(start, end)`, which cross when `later` replaced the whole hunk."""
    if text == later:
        return list(located)
    changeset = diff_edits(text, later)
    carried = []
    for hunk in located:
        if hunk.span is None:
            carried.append(hunk)
            continue
        region = track_changeset(Region(*hunk.span), changeset)
        # the ends as they are, not in order: a region the later text replaced whole keeps
        # its crossed ends, which take in what is typed at them (see Region)
        carried.append(replace(hunk, span=(region.start, region.end)))
    return carried
