"""`dart test` and `flutter test` (the compact and expanded reporters): progress lines
"00:02 +14 ~1 -1: name" whose last one closes the run ("... All tests passed!" or
"... Some tests failed."); a failing test's line ends with " [E]"."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_dart"]

_PROGRESS = re.compile(r"^\d+:\d\d \+(\d+)(?: ~(\d+))?(?: -(\d+))?: (.*?)\s*$", re.MULTILINE)
_CLOSING = ("All tests passed!", "Some tests failed.", "All tests skipped.")


def parse_dart(text: str) -> RunCounts | None:
    lines = _PROGRESS.findall(text)
    closing = [line for line in lines if line[3] in _CLOSING]
    if not closing:
        return None
    passed, skipped, failed, _ = closing[-1]
    counts = RunCounts("dart", passed=int(passed), failed=int(failed or 0))
    counts.skipped = int(skipped or 0)
    failing = [name.removesuffix(" [E]") for *_, name in lines if name.endswith(" [E]")]
    # the expanded reporter prefixes the file: "test/calc_test.dart: divides [E]"
    counts.failing_ids = unique([re.sub(r"^\S+\.dart: ", "", n) for n in failing])
    return counts
