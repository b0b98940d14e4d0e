"""PHPUnit (9 and later): "OK (5 tests, 5 assertions)" or "Tests: 6, Assertions: 4, Errors: 1,
Failures: 1, Skipped: 1." with the failures listed as "1) CalcTest::testDivides" under
"There was 1 failure:" / "There were 2 errors:"."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_phpunit"]

_OK = re.compile(r"^OK \((\d+) tests?, \d+ assertions?\)", re.MULTILINE)
_SUMMARY = re.compile(r"^Tests: (\d+), Assertions: \d+((?:, \w+: \d+)*)\.?\s*$", re.MULTILINE)
_SECTION = re.compile(r"^There (?:was|were) \d+ (\w+)", re.MULTILINE)
_LISTED = re.compile(r"^\d+\) (\S+::\S+?)(?: with data set .*)?$", re.MULTILINE)


def parse_phpunit(text: str) -> RunCounts | None:
    summaries = list(_SUMMARY.finditer(text))
    oks = list(_OK.finditer(text))
    if not summaries and not oks:
        return None
    if oks and (not summaries or oks[-1].start() > summaries[-1].start()):
        return RunCounts("phpunit", passed=int(oks[-1].group(1)))
    tests = int(summaries[-1].group(1))
    kinds = {k.lower(): int(n) for k, n in re.findall(r"(\w+): (\d+)", summaries[-1].group(2))}
    failed, errors = kinds.get("failures", 0), kinds.get("errors", 0)
    skipped = kinds.get("skipped", 0) + kinds.get("incomplete", 0)
    counts = RunCounts("phpunit", failed=failed, errors=errors, skipped=skipped)
    counts.passed = tests - failed - errors - skipped  # risky tests ran and passed
    failing = []
    sections = list(_SECTION.finditer(text))
    for i, section in enumerate(sections):
        if section.group(1).startswith(("error", "failure")):
            end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
            failing.extend(_LISTED.findall(text[section.end() : end]))
    counts.failing_ids = unique(failing)
    return counts
