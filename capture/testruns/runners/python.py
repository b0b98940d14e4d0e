"""pytest: "==== 2 failed, 10 passed, 1 skipped, 1 error in 0.52s ====" (also the `-q` form
without the rules), "no tests ran", and the short summary's "FAILED id" / "ERROR id" lines."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_pytest"]

_LINE = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
    r"(?:, )?)+)\s+in\s+[\d.]+s",
    re.MULTILINE,
)
_NO_TESTS = re.compile(r"^=*\s*no tests ran in [\d.]+s", re.MULTILINE)
_FAILED_ID = re.compile(r"^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)", re.MULTILINE)


def parse_pytest(text: str) -> RunCounts | None:
    lines = _LINE.findall(text)
    if not lines:
        return RunCounts("pytest") if _NO_TESTS.search(text) else None
    passed = failed = errors = skipped = 0
    for number, word in re.findall(r"(\d+) (\w+)", lines[-1]):
        n = int(number)
        if word in ("passed", "xpassed"):
            passed += n
        elif word == "failed":
            failed += n
        elif word.startswith("error"):
            errors += n
        elif word in ("skipped", "xfailed"):
            skipped += n
    counts = RunCounts("pytest", passed, failed, errors, skipped)
    counts.failing_ids = unique(_FAILED_ID.findall(text))
    return counts
