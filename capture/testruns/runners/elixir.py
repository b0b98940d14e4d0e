"""ExUnit (`mix test`): "5 tests, 1 failure, 1 skipped" (also "3 doctests, 2 properties, ...",
", 2 excluded", ", 1 invalid"), failures headed "  1) test divides (CalcTest)"."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_exunit"]

_SUMMARY = re.compile(
    r"^((?:\d+ (?:doctests?|properties|property|tests?), )*\d+ failures?(?:, \d+ \w+)*)\s*$",
    re.MULTILINE,
)
_FAILED = re.compile(r"^\s+\d+\) ((?:test|doctest|property) .+ \(\S+\))\s*$", re.MULTILINE)


def parse_exunit(text: str) -> RunCounts | None:
    found = _SUMMARY.findall(text)
    if not found:
        return None
    words = {}
    for number, word in re.findall(r"(\d+) (\w+)", found[-1]):
        words[word.rstrip("s") if word != "properties" else "property"] = int(number)
    total = words.get("test", 0) + words.get("doctest", 0) + words.get("property", 0)
    failed, skipped = words.get("failure", 0), words.get("skipped", 0)
    # excluded tests were filtered out (--only, --exclude), not run; invalid ones could not
    # run because setup_all failed
    excluded, invalid = words.get("excluded", 0), words.get("invalid", 0)
    counts = RunCounts("exunit", failed=failed, errors=invalid, skipped=skipped)
    counts.passed = max(total - failed - skipped - excluded - invalid, 0)
    counts.failing_ids = unique(_FAILED.findall(text))
    return counts
