"""Test counts read from a runner's own summary in its output (pytest, jest, vitest, go test,
cargo test and nextest, mocha-like "N passing/failing"). Pure functions over text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["RunCounts", "parse_summary"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


@dataclass(slots=True)
class RunCounts:
    runner: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failing_ids: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped


def _count(pattern: str, text: str) -> int:
    return sum(int(m) for m in re.findall(pattern, text, re.MULTILINE))


# pytest: "==== 2 failed, 10 passed, 1 skipped, 1 error in 0.52s ====" (also "-q" form without =)
_PYTEST_LINE = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)"
    r"(?:, )?)+)\s+in\s+[\d.]+s",
    re.MULTILINE,
)
_PYTEST_NO_TESTS = re.compile(r"^=*\s*no tests ran in [\d.]+s", re.MULTILINE)
_PYTEST_FAILED_ID = re.compile(r"^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)", re.MULTILINE)


def _pytest(text: str) -> RunCounts | None:
    lines = _PYTEST_LINE.findall(text)
    if not lines:
        return RunCounts("pytest") if _PYTEST_NO_TESTS.search(text) else None
    summary = lines[-1]
    counts = RunCounts("pytest")
    for number, word in re.findall(r"(\d+) (\w+)", summary):
        n = int(number)
        if word == "passed" or word == "xpassed":
            counts.passed += n
        elif word == "failed":
            counts.failed += n
        elif word.startswith("error"):
            counts.errors += n
        elif word in ("skipped", "xfailed"):
            counts.skipped += n
    counts.failing_ids = list(dict.fromkeys(_PYTEST_FAILED_ID.findall(text)))
    return counts


# jest: "Tests:       1 failed, 1 skipped, 4 passed, 6 total"
_JEST = re.compile(r"^Tests:\s+(.*\d+ total)\s*$", re.MULTILINE)
_JEST_FAILED = re.compile(r"^\s*● (.+?)\s*$", re.MULTILINE)


def _tally(text: str, summary: re.Pattern[str], runner: str, skipped: str) -> RunCounts | None:
    """Counts from the last summary line of words like "1 failed, 4 passed" (jest, vitest)."""
    found = summary.findall(text)
    if not found:
        return None
    line = found[-1]
    counts = RunCounts(runner)
    counts.passed = _count(r"(\d+) passed", line)
    counts.failed = _count(r"(\d+) failed", line)
    counts.skipped = _count(rf"(\d+) (?:{skipped})", line)
    return counts


def _jest(text: str) -> RunCounts | None:
    counts = _tally(text, _JEST, "jest", "skipped|todo|pending")
    if counts is not None:
        failing = (m for m in _JEST_FAILED.findall(text) if "›" in m)
        counts.failing_ids = list(dict.fromkeys(failing))
    return counts


# vitest: " Tests  1 failed | 3 passed | 1 skipped (5)"
_VITEST = re.compile(r"^\s*Tests\s+((?:\d+ \w+(?: \| )?)+)\s*\(\d+\)", re.MULTILINE)
_VITEST_FAILED = re.compile(r"^\s*(?:FAIL|×|✗)\s+(\S+\s*>\s*.+?)\s*$", re.MULTILINE)


def _vitest(text: str) -> RunCounts | None:
    counts = _tally(text, _VITEST, "vitest", "skipped|todo")
    if counts is not None:
        counts.failing_ids = list(dict.fromkeys(_VITEST_FAILED.findall(text)))
    return counts


# cargo test: "test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out"
_CARGO = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", re.MULTILINE)
_CARGO_FAILED = re.compile(r"^test (\S+) \.\.\. FAILED", re.MULTILINE)
# cargo nextest: "Summary [   0.010s] 5 tests run: 4 passed, 1 failed, 2 skipped"
_NEXTEST = re.compile(r"Summary \[.*?\]\s+\d+ tests? run: (.*)$", re.MULTILINE)
_NEXTEST_FAILED = re.compile(r"^\s*FAIL \[.*?\]\s+(.+?)\s*$", re.MULTILINE)


def _cargo(text: str) -> RunCounts | None:
    nextest = _NEXTEST.findall(text)
    if nextest:
        summary = nextest[-1]
        counts = RunCounts("nextest")
        counts.passed = _count(r"(\d+) passed", summary)
        counts.failed = _count(r"(\d+) failed", summary)
        counts.skipped = _count(r"(\d+) skipped", summary)
        counts.failing_ids = list(dict.fromkeys(_NEXTEST_FAILED.findall(text)))
        return counts
    results = _CARGO.findall(text)
    if not results:
        return None
    counts = RunCounts("cargo")
    for passed, failed, ignored in results:  # one line per test binary
        counts.passed += int(passed)
        counts.failed += int(failed)
        counts.skipped += int(ignored)
    counts.failing_ids = list(dict.fromkeys(_CARGO_FAILED.findall(text)))
    return counts


# go test: "--- PASS: TestX (0.00s)", "--- FAIL: TestY", "--- SKIP:", package lines "ok"/"FAIL"
_GO_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.MULTILINE)
_GO_PACKAGE = re.compile(r"^(ok|FAIL|---)\s+\S+\s+[\d.]+s", re.MULTILINE)
# A package whose tests could not even be built: "FAIL\texample.com/m/pkg [build failed]"
_GO_BROKEN = re.compile(r"^FAIL\s+(\S+)\s+\[(?:build|setup) failed\]", re.MULTILINE)


def _go(text: str) -> RunCounts | None:
    results = _GO_RESULT.findall(text)
    broken = _GO_BROKEN.findall(text)
    if not results and not broken and not _GO_PACKAGE.search(text):
        return None
    counts = RunCounts("go")
    counts.errors = len(broken)
    counts.failing_ids.extend(broken)
    for status, name in results:
        if status == "PASS":
            counts.passed += 1
        elif status == "FAIL":
            counts.failed += 1
            counts.failing_ids.append(name)
        else:
            counts.skipped += 1
    return counts


# mocha and friends: "  12 passing (30ms)", "  2 failing", "  1 pending"
_MOCHA = re.compile(r"^\s+(\d+) passing \(", re.MULTILINE)


def _mocha(text: str) -> RunCounts | None:
    if not _MOCHA.search(text):
        return None
    counts = RunCounts("mocha")
    counts.passed = _count(r"^\s+(\d+) passing", text)
    counts.failed = _count(r"^\s+(\d+) failing", text)
    counts.skipped = _count(r"^\s+(\d+) pending", text)
    return counts


_PARSERS = (_pytest, _cargo, _jest, _vitest, _go, _mocha)


def parse_summary(output: str) -> RunCounts | None:
    """Counts from the last summary a known runner printed, or None when none is recognised."""
    text = _ANSI.sub("", output).replace("\r\n", "\n")
    for parser in _PARSERS:
        counts = parser(text)
        if counts is not None:
            return counts
    return None
