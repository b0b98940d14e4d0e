"""RSpec: "5 examples, 1 failure, 1 pending" (", N errors occurred outside of examples"), and
the rerun lines "rspec ./spec/calc_spec.rb:12 # calc divides"."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_rspec"]

_SUMMARY = re.compile(
    r"^(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?"
    r"(?:, (\d+) errors? occurred outside of examples)?\s*$",
    re.MULTILINE,
)
_RERUN = re.compile(r"^rspec (\S+:\d+|\S+\[[\d:]+\]) # ", re.MULTILINE)
# a spec file that does not load stops the run: "An error occurred while loading ./x_spec.rb."
_NOT_LOADED = re.compile(r"^An error occurred while loading (\S+?)\.?$", re.MULTILINE)


def parse_rspec(text: str) -> RunCounts | None:
    found = _SUMMARY.findall(text)
    if not found:
        return None
    examples, failures, pending, outside = (int(n or 0) for n in found[-1])
    counts = RunCounts("rspec", passed=examples - failures - pending, failed=failures)
    counts.skipped, counts.errors = pending, outside
    ids = [i.removeprefix("./") for i in _RERUN.findall(text) + _NOT_LOADED.findall(text)]
    counts.failing_ids = unique(ids)
    return counts
