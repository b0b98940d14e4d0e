"""Path globs as regular expressions: `*` and `?` stay within one path segment, `**` crosses
segments, `**/` stands for any number of leading directories (none included)."""

from __future__ import annotations

import re

__all__ = ["glob_regex"]


def glob_regex(pattern: str) -> str:
    """The body of a regular expression matching what `pattern` matches (not anchored)."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)
