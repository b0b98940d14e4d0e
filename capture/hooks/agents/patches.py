"""Hunks from the shapes agents describe edits in: Claude Code's structuredPatch, Codex's
apply_patch text, a whole file written over an old one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from capture.edits.placement import without_context
from capture.model import HunkInput

__all__ = [
    "PatchFile",
    "fit_hunks",
    "hunks_between",
    "parse_apply_patch",
    "structured_patch_hunks",
    "trim_context",
]


def _runs(lines: Iterable[tuple[str, str, int]]) -> list[HunkInput]:
    """Hunks from (tag, text, new_line) triples: each run of '-'/'+' lines is one hunk whose
    `line` is the new-file line where it starts. A run that only deletes keeps its line so it
    can still be placed (it has no new text to search for)."""
    hunks: list[HunkInput] = []
    old: list[str] = []
    new: list[str] = []
    start = 0
    for tag, text, line in lines:
        if tag in ("-", "+"):
            if not old and not new:
                start = line
            (old if tag == "-" else new).append(text)
            continue
        if old or new:
            hunks.append(HunkInput("".join(old), "".join(new), line=start or None))
            old, new = [], []
    if old or new:
        hunks.append(HunkInput("".join(old), "".join(new), line=start or None))
    return hunks


def structured_patch_hunks(patch: Any) -> list[HunkInput]:
    """Claude Code's `structuredPatch` ([{oldStart, oldLines, newStart, newLines, lines}])."""
    if not isinstance(patch, list):
        return []
    hunks: list[HunkInput] = []
    for part in patch:
        if not isinstance(part, dict) or not isinstance(part.get("lines"), list):
            continue
        new_line = part.get("newStart")
        line = new_line if isinstance(new_line, int) and new_line > 0 else 1

        def tagged(lines: list[Any], first: int) -> Iterable[tuple[str, str, int]]:
            current = first
            for raw in lines:
                if not isinstance(raw, str) or raw.startswith("\\"):
                    continue
                tag, text = raw[:1], raw[1:] + "\n"
                yield tag, text, current
                if tag != "-":
                    current += 1

        hunks.extend(_runs(tagged(part["lines"], line)))
    return hunks


class PatchFile:
    """One file of a Codex apply_patch: `action` is add, update or delete; `content` is the
    whole file, for an added file. (Not a dataclass: see capture.hooks.agents.facts.)"""

    __slots__ = ("action", "path", "move_to", "hunks", "content")

    def __init__(self, action: str, path: str) -> None:
        self.action = action
        self.path = path
        self.move_to: str | None = None
        self.hunks: list[HunkInput] = []
        self.content: str | None = None


_BEGIN = "*** Begin Patch"
_END = "*** End Patch"
_HEADERS = {"*** Add File: ": "add", "*** Update File: ": "update", "*** Delete File: ": "delete"}


def _update_hunks(body: list[str]) -> list[HunkInput]:
    """Runs of -/+ lines of an update; context lines (' ') and '@@' headers separate them. A run
    that only deletes takes the context line before it (or after it), so it has text to be
    found by."""
    chunks: list[list[tuple[str, str]]] = [[]]
    for raw in body:
        if raw.startswith("@@"):
            chunks.append([])
            continue
        if raw.startswith("*** End of File"):
            continue
        tag = raw[:1] if raw[:1] in ("+", "-", " ") else " "
        text = raw[1:] if raw[:1] in ("+", "-", " ") else raw
        chunks[-1].append((tag, text + "\n"))
    hunks: list[HunkInput] = []
    for chunk in chunks:
        i = 0
        while i < len(chunk):
            if chunk[i][0] == " ":
                i += 1
                continue
            j = i
            while j < len(chunk) and chunk[j][0] != " ":
                j += 1
            old = "".join(t for tag, t in chunk[i:j] if tag == "-")
            new = "".join(t for tag, t in chunk[i:j] if tag == "+")
            if not new:
                if i > 0:
                    context = chunk[i - 1][1]
                    old, new = context + old, context
                elif j < len(chunk):
                    context = chunk[j][1]
                    old, new = old + context, context
            hunks.append(HunkInput(old, new))
            i = j
    return hunks


def parse_apply_patch(text: str) -> list[PatchFile]:
    """The files of a `*** Begin Patch ... *** End Patch` text (Codex's apply_patch tool).
    Lenient: a missing Begin/End line or unknown lines are skipped."""
    files: list[PatchFile] = []
    body: list[str] = []
    current: PatchFile | None = None

    def close() -> None:
        if current is None:
            return
        if current.action == "add":
            current.content = "".join(line[1:] + "\n" for line in body if line.startswith("+"))
            current.hunks = [HunkInput("", current.content, line=1)]
        elif current.action == "update":
            current.hunks = _update_hunks(body)
        files.append(current)

    for line in text.splitlines():
        if line.strip() in (_BEGIN, _END):
            continue
        header = next((h for h in _HEADERS if line.startswith(h)), None)
        if header is not None:
            close()
            current = PatchFile(_HEADERS[header], line[len(header) :].strip())
            body = []
            continue
        if current is not None and line.startswith("*** Move to: "):
            current.move_to = line[len("*** Move to: ") :].strip()
            continue
        if current is not None:
            body.append(line)
    close()
    return files


def hunks_between(old: str, new: str) -> list[HunkInput]:
    """The hunks that turn `old` into `new` (a whole file written over an old one), each with
    its offset in `new`."""
    from capture.edits.textdiff import diff_edits

    hunks: list[HunkInput] = []
    shift = 0
    for edit in diff_edits(old, new):
        hunks.append(HunkInput(old[edit.start : edit.end], edit.text, start=edit.start + shift))
        shift += edit.delta
    return hunks


def _variants(hunk: HunkInput) -> Iterable[HunkInput]:
    old, new = hunk.old_text, hunk.new_text
    crlf = "\n" in new and "\r\n" not in new
    if crlf:  # the file has CRLF line ends, the payload LF
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        yield HunkInput(old, new, hunk.start, hunk.line)
    for o, n in ((hunk.old_text, hunk.new_text), (old, new)) if crlf else ((old, new),):
        if n.endswith("\n"):  # a last line without its newline, shown with one in the patch
            o = o.removesuffix("\r\n") if n.endswith("\r\n") else o.removesuffix("\n")
            n = n.removesuffix("\r\n") if n.endswith("\r\n") else n[:-1]
            yield HunkInput(o, n, hunk.start, hunk.line)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


def _on_line(text: str, hunk: HunkInput, starts: list[int]) -> HunkInput:
    """A hunk with a line but no offset, pinned to its new text's occurrence on that line (a
    Tab completion ends a long line: the nearest occurrence to the line's start may be on an
    earlier line)."""
    if hunk.start is not None or hunk.line is None or not hunk.new_text:
        return hunk
    if hunk.line - 1 >= len(starts):
        return hunk
    line_start = starts[hunk.line - 1]
    line_end = text.find("\n", line_start)
    at = text.find(hunk.new_text, line_start)
    if at < 0 or (line_end >= 0 and at > line_end):
        return hunk
    return HunkInput(hunk.old_text, hunk.new_text, start=at, line=hunk.line)


def trim_context(hunk: HunkInput) -> HunkInput:
    """A replacement without the whole lines it leaves unchanged at either end (agents often
    repeat a line around what they change, to make old_string unique). A hunk that would be
    left with no new text keeps them: they are what it is found by."""
    if hunk.start is not None:
        return hunk
    return without_context(hunk)[0]


def fit_hunks(text: str, hunks: list[HunkInput]) -> list[HunkInput]:
    """The hunks adjusted to how the file really spells them: a hunk whose new text is not in
    the file is replaced by the first variant that is (see _variants); a hunk with a line is
    pinned to its occurrence on that line."""
    fitted: list[HunkInput] = []
    starts: list[int] | None = None
    for hunk in hunks:
        hunk = trim_context(hunk)
        if hunk.new_text and hunk.new_text not in text:
            hunk = next((v for v in _variants(hunk) if v.new_text in text), hunk)
        # only an ambiguous hunk needs pinning: locate finds a unique one by itself
        if (
            hunk.line is not None
            and hunk.start is None
            and hunk.new_text
            and text.find(hunk.new_text) != text.rfind(hunk.new_text)
        ):
            starts = starts if starts is not None else _line_starts(text)
            hunk = _on_line(text, hunk, starts)
        fitted.append(hunk)
    return fitted
