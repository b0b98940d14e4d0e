"""Unified diffs (as `diff -u` and `git diff` write them) turned into hunks."""

from __future__ import annotations

import re

from capture.errors import InputError
from capture.model import HunkInput

__all__ = ["parse_unified_diff"]

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_unified_diff(diff: str) -> tuple[str | None, list[HunkInput]]:
    """The target file name (from the +++ line, when present) and one HunkInput per run of
    changed lines; context lines are dropped so each hunk holds just old and new text."""
    target: str | None = None
    hunks: list[HunkInput] = []
    lines = diff.splitlines(keepends=True)
    i = 0
    saw_header = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("+++ "):
            name = line[4:].rstrip("\r\n").split("\t")[0]
            if name != "/dev/null":
                target = name[2:] if name.startswith(("a/", "b/")) else name
            i += 1
            continue
        match = _HUNK_HEADER.match(line)
        if not match:
            i += 1
            continue
        saw_header = True
        new_line = int(match.group(3))
        i += 1
        old: list[str] = []
        new: list[str] = []
        start_line = new_line
        while i < len(lines) and not lines[i].startswith(("@@", "--- ", "diff ")):
            body = lines[i]
            tag, text = body[:1], body[1:]
            if body.startswith("\\"):  # "\ No newline at end of file": strip the previous EOL
                if new and lines[i - 1].startswith("+"):
                    new[-1] = new[-1].rstrip("\r\n")
                elif old and lines[i - 1].startswith("-"):
                    old[-1] = old[-1].rstrip("\r\n")
                i += 1
                continue
            if tag in ("-", "+"):
                if not old and not new:
                    start_line = new_line
                (old if tag == "-" else new).append(text)
                if tag == "+":
                    new_line += 1
            else:
                if old or new:
                    hunks.append(HunkInput("".join(old), "".join(new), line=start_line))
                    old, new = [], []
                new_line += 1
            i += 1
        if old or new:
            hunks.append(HunkInput("".join(old), "".join(new), line=start_line))
    if not saw_header:
        raise InputError("diff holds no hunk (expected lines starting with '@@ -a,b +c,d @@')")
    return target, hunks
