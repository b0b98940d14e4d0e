"""JVM builds: Maven Surefire/Failsafe, Gradle, sbt (with ScalaTest's failure lines)."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_gradle", "parse_maven", "parse_sbt"]

# Surefire closes each module with "Tests run: 6, Failures: 1, Errors: 1, Skipped: 1" (its
# per-class lines go on with ", Time elapsed: ..."); each failing test has a line
# "com.example.CalcTest.divides -- Time elapsed: 0.004 s <<< FAILURE!" (3.x) or
# "divides(com.example.CalcTest)  Time elapsed: 0.004 sec  <<< FAILURE!" (2.x).
_MAVEN = re.compile(
    r"^(?:\[\w+\]\s+)?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$",
    re.MULTILINE,
)
_MAVEN_FAILED_3 = re.compile(
    r"^(?:\[\w+\]\s+)?([\w.$]+\.[\w$\[\]()\-, ]+?) -- Time elapsed: .*<<< (?:FAILURE|ERROR)!",
    re.MULTILINE,
)
_MAVEN_FAILED_2 = re.compile(
    r"^(?:\[\w+\]\s+)?([\w$]+)\(([\w.$]+)\)\s+Time elapsed: .*<<< (?:FAILURE|ERROR)!",
    re.MULTILINE,
)


def parse_maven(text: str) -> RunCounts | None:
    found = _MAVEN.findall(text)
    if not found:
        return None
    counts = RunCounts("surefire", passed=0)
    runs = failures = errors = skipped = 0
    for r, f, e, s in found:  # one closing line per module of a multi-module build
        runs, failures, errors, skipped = (
            runs + int(r),
            failures + int(f),
            errors + int(e),
            skipped + int(s),
        )
    counts.passed = runs - failures - errors - skipped
    counts.failed, counts.errors, counts.skipped = failures, errors, skipped
    ids = _MAVEN_FAILED_3.findall(text)
    ids += [f"{cls}.{method}" for method, cls in _MAVEN_FAILED_2.findall(text)]
    counts.failing_ids = unique(ids)
    return counts


# Gradle: "5 tests completed, 1 failed, 1 skipped" and "CalcTest > divides() FAILED"
_GRADLE = re.compile(r"^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?", re.M)
_GRADLE_FAILED = re.compile(r"^(\S.*? > .+?) FAILED\s*$", re.MULTILINE)


def parse_gradle(text: str) -> RunCounts | None:
    found = _GRADLE.findall(text)
    if not found:
        return None
    completed = failed = skipped = 0
    for c, f, s in found:
        completed, failed, skipped = completed + int(c), failed + int(f or 0), skipped + int(s or 0)
    counts = RunCounts(
        "gradle", passed=completed - failed - skipped, failed=failed, skipped=skipped
    )
    counts.failing_ids = unique(_GRADLE_FAILED.findall(text))
    return counts


# sbt: "[error] Failed: Total 8, Failed 8, Errors 0, Passed 0" (", Skipped 1, Ignored 1, ..."
# may follow) or "[info] Passed: Total 5, Failed 0, Errors 0, Passed 5"; ScalaTest names a
# failing test "[info] - divides *** FAILED ***", sbt the failing suites under "Failed tests:".
_SBT = re.compile(
    r"^\[\w+\]\s+(?:Passed|Failed): Total (\d+), Failed (\d+), Errors (\d+), Passed (\d+)(.*)$",
    re.M,
)
_SCALATEST_FAILED = re.compile(r"^\[\w+\]\s+- (.+?) \*\*\* FAILED \*\*\*", re.MULTILINE)
_SBT_FAILED_SUITES = re.compile(r"^\[error\] Failed tests:\n((?:\[error\]\s+[\w.$]+\n?)+)", re.M)


def parse_sbt(text: str) -> RunCounts | None:
    found = _SBT.findall(text)
    if not found:
        return None
    _total, failed, errors, passed, rest = found[-1]
    skipped = sum(int(n) for n in re.findall(r"(?:Skipped|Ignored|Canceled|Pending) (\d+)", rest))
    counts = RunCounts("sbt", passed=int(passed), failed=int(failed), errors=int(errors))
    counts.skipped = skipped
    ids = _SCALATEST_FAILED.findall(text)
    if not ids:
        for block in _SBT_FAILED_SUITES.findall(text):
            ids.extend(line.split()[-1] for line in block.splitlines() if line.strip())
    counts.failing_ids = unique(ids)
    return counts
