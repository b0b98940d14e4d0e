"""Native toolchains: ctest, zig (`zig test`, `zig build test`), swift test (XCTest and Swift
Testing), bazel test (counts are test targets)."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_bazel", "parse_ctest", "parse_swift", "parse_zig"]

# ctest: "80% tests passed, 1 tests failed out of 5"; "The following tests did not run:"
# lists skipped ones ("5 - later (Skipped)"), "The following tests FAILED:" the failures
# ("4 - divides (Failed)", also "(Timeout)", "(SEGFAULT)", "(Not Run)").
_CTEST = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)", re.MULTILINE)
_CTEST_LISTED = re.compile(r"^\s+\d+ - (.+?) \((\w[\w ]*)\)\s*$", re.MULTILINE)


def parse_ctest(text: str) -> RunCounts | None:
    found = _CTEST.findall(text)
    if not found:
        return None
    failed, total = (int(n) for n in found[-1])
    closing = text[text.rfind("tests passed, ") :]
    not_run = closing.find("The following tests did not run:")
    failed_at = closing.find("The following tests FAILED:")
    skipped = 0
    failing = []
    for match in _CTEST_LISTED.finditer(closing):
        if failed_at >= 0 and match.start() > failed_at:
            failing.append(match.group(1))
        elif not_run >= 0 and match.start() > not_run:
            skipped += 1
    counts = RunCounts("ctest", passed=total - failed - skipped, failed=failed, skipped=skipped)
    counts.failing_ids = unique(failing)
    return counts


# zig test: "2 passed; 1 skipped; 1 failed." or "All 4 tests passed."; each test is announced
# "3/4 calc.test.divides..." and ends "OK", "SKIP" or "FAIL (Error)" (on that line, or on a
# later one when the test printed).
_ZIG = re.compile(r"^(\d+) passed; (\d+) skipped; (\d+) failed\.$", re.MULTILINE)
_ZIG_ALL = re.compile(r"^All (\d+) tests? passed\.$", re.MULTILINE)
_ZIG_ALL_SKIPPED = re.compile(r"^(\d+) passed; (\d+) skipped\.$", re.MULTILINE)
# zig build test: "Build Summary: 3/5 steps succeeded; 1 failed; 2/4 tests passed; 1 skipped;
# 1 failed" (0.11-0.13), "Build Summary: 1/3 steps succeeded (1 failed); 2/4 tests passed
# (1 skipped, 1 failed)" (0.14 on), whose failures read "error: 'calc.test.divides' failed:".
_ZIG_BUILD = re.compile(r"^Build Summary: .*?(\d+)/(\d+) tests passed(.*)$", re.MULTILINE)
_ZIG_TEST = re.compile(r"^\d+/\d+ (?:\S+?\.)?test\.(.+?)\.\.\.(.*)$", re.MULTILINE)
_ZIG_BUILD_FAILED = re.compile(r"^error: '(?:\S+?\.)?test\.(.+?)' failed", re.MULTILINE)
_ZIG_FAIL = re.compile(r"^FAIL \(", re.MULTILINE)


def parse_zig(text: str) -> RunCounts | None:
    counts = RunCounts("zig")
    if found := _ZIG.findall(text):
        passed, skipped, failed = (int(n) for n in found[-1])
    elif found := _ZIG_ALL_SKIPPED.findall(text):
        (passed, skipped), failed = (int(n) for n in found[-1]), 0
    elif found := _ZIG_ALL.findall(text):
        passed, skipped, failed = int(found[-1]), 0, 0
    elif found := _ZIG_BUILD.findall(text):
        ok, _total, rest = found[-1]
        skip, fail = re.search(r"(\d+) skipped", rest), re.search(r"(\d+) failed", rest)
        passed = int(ok)
        skipped, failed = int(skip.group(1)) if skip else 0, int(fail.group(1)) if fail else 0
    else:
        return None
    counts.passed, counts.skipped, counts.failed = passed, skipped, failed
    tests = list(_ZIG_TEST.finditer(text))
    failing = []
    for i, test in enumerate(tests):
        end = tests[i + 1].start() if i + 1 < len(tests) else len(text)
        rest = test.group(2)
        if rest.startswith("FAIL") or (
            not rest.startswith(("OK", "SKIP")) and _ZIG_FAIL.search(text, test.end(), end)
        ):
            failing.append(test.group(1))
    counts.failing_ids = unique(failing + _ZIG_BUILD_FAILED.findall(text))
    return counts


# XCTest: "Executed 5 tests, with 1 test skipped and 1 failure (0 unexpected) in ..." per
# suite, the outermost ("All tests") last; "Test Case '-[Mod.Class testX]' failed" (macOS) or
# "Test Case 'Class.testX' failed" (Linux). Swift Testing: "✔ Test run with 5 tests passed
# after ..." / "✘ Test run with 5 tests failed after 0.1 seconds with 2 issues." and
# "✘ Test divides() failed after ...".
_XCTEST = re.compile(
    r"^\s*Executed (\d+) tests?, with (?:(\d+) tests? skipped and )?(\d+) failures?", re.M
)
_XCTEST_FAILED = re.compile(r"^Test Case '(?:-\[)?(.+?)\]?' failed", re.MULTILINE)
_SWIFT_TESTING = re.compile(
    r"^\S+ Test run with (\d+) tests?(?: in \d+ suites?)? (passed|failed)", re.M
)
_SWIFT_TESTING_FAILED = re.compile(r"^\S+ Test (?!run with )(.+?) failed after", re.MULTILINE)
_SWIFT_TESTING_SKIPPED = re.compile(r"^\S+ Test .+? skipped", re.MULTILINE)


def parse_swift(text: str) -> RunCounts | None:
    xctest = _XCTEST.findall(text)
    testing = _SWIFT_TESTING.findall(text)
    if not xctest and not testing:
        return None
    counts = RunCounts("swift", passed=0, failed=0, skipped=0)
    passed = failed = skipped = 0
    failing: list[str] = []
    if xctest:
        total, skip, fail = (int(n or 0) for n in xctest[-1])  # the outermost suite's
        passed, failed, skipped = total - fail - skip, fail, skip
        failing.extend(_XCTEST_FAILED.findall(text))
    if testing:
        total = int(testing[-1][0])
        testing_failed = _SWIFT_TESTING_FAILED.findall(text)
        testing_skipped = len(_SWIFT_TESTING_SKIPPED.findall(text))
        failed += len(testing_failed)
        skipped += testing_skipped
        passed += max(total - len(testing_failed) - testing_skipped, 0)
        failing.extend(testing_failed)
    counts.passed, counts.failed, counts.skipped = passed, failed, skipped
    counts.failing_ids = unique(failing)
    return counts


# bazel: one line per test target ("//pkg:calc_test   (cached) PASSED in 0.1s", "FAILED in",
# "FLAKY", "TIMEOUT", "NO STATUS", "SKIPPED", "FAILED TO BUILD"), closed by "Executed 1 out of
# 3 tests: 2 tests pass and 1 fails locally."
_BAZEL = re.compile(r"^Executed \d+ out of (\d+) tests?:", re.MULTILINE)
_BAZEL_TARGET = re.compile(
    r"^(//\S*|@\S+//\S*)\s+(?:\(cached\) )?(PASSED|FAILED TO BUILD|FAILED|FLAKY|TIMEOUT|"
    r"NO STATUS|SKIPPED|INCOMPLETE)\b",
    re.MULTILINE,
)


def parse_bazel(text: str) -> RunCounts | None:
    found = _BAZEL.findall(text)
    if not found:
        return None
    closing = text[text.rfind("Executed ") :]
    total = int(found[-1])
    targets = {t: s for t, s in _BAZEL_TARGET.findall(text)}
    failing = [t for t, s in targets.items() if s in ("FAILED", "TIMEOUT", "FLAKY", "INCOMPLETE")]
    broken = [t for t, s in targets.items() if s == "FAILED TO BUILD"]
    failed = int(m.group(1)) if (m := re.search(r"(\d+) fails?\b", closing)) else len(failing)
    skipped = len([s for s in targets.values() if s in ("SKIPPED", "NO STATUS")])
    passed = int(m.group(1)) if (m := re.search(r"(\d+) tests? pass", closing)) else 0
    counts = RunCounts("bazel", passed=passed, failed=failed, errors=len(broken))
    counts.skipped = skipped if skipped else max(total - passed - failed - len(broken), 0)
    counts.failing_ids = unique(failing + broken)
    return counts
