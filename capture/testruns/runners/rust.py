"""cargo test (one "test result:" line per test binary, doc-tests included) and nextest."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, count, unique

__all__ = ["parse_cargo"]

# "test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out"
_CARGO = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", re.MULTILINE)
_CARGO_FAILED = re.compile(r"^test (\S+(?: - \S+(?: \(line \d+\))?)?) \.\.\. FAILED", re.MULTILINE)
# "Summary [   0.010s] 5 tests run: 4 passed, 1 failed, 2 skipped"
_NEXTEST = re.compile(r"Summary \[.*?\]\s+\d+ tests? run: (.*)$", re.MULTILINE)
_NEXTEST_FAILED = re.compile(r"^\s*(?:FAIL|TIMEOUT|SIGSEGV|SIGABRT) \[.*?\]\s+(.+?)\s*$", re.M)


# a test target that does not build: "error: could not compile `calc` (lib test) due to ..."
_CARGO_BROKEN = re.compile(r"^error: could not compile `([^`]+)`( \([^)]+\))?", re.MULTILINE)


def parse_cargo(text: str) -> RunCounts | None:
    nextest = _NEXTEST.findall(text)
    if nextest:
        summary = nextest[-1]
        counts = RunCounts("nextest")
        counts.passed = count(r"(\d+) passed", summary)
        counts.failed = count(r"(\d+) failed", summary) + count(r"(\d+) timed out", summary)
        counts.skipped = count(r"(\d+) skipped", summary)
        counts.failing_ids = unique(_NEXTEST_FAILED.findall(text))
        return counts
    results = _CARGO.findall(text)
    broken = unique([name + target for name, target in _CARGO_BROKEN.findall(text)])
    if not results and not broken:
        return None
    passed = failed = ignored = 0
    for p, f, i in results:
        passed, failed, ignored = passed + int(p), failed + int(f), ignored + int(i)
    counts = RunCounts("cargo", passed=passed, failed=failed, errors=len(broken), skipped=ignored)
    counts.failing_ids = unique(_CARGO_FAILED.findall(text) + broken)
    return counts
