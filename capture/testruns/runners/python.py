"""pytest: "==== 2 failed, 10 passed, 1 skipped, 1 error in 0.52s ====" (also the `-q` form
without the rules), "no tests ran", and the short summary's "FAILED id" / "ERROR id" lines.
unittest (`python -m unittest`, Django's and others' runners built on it): "Ran 3 tests in
0.01s", then "OK", "OK (skipped=1)" or "FAILED (failures=1, errors=1)", and a "FAIL: name
(module.Class.name)" header per failing test."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_pytest", "parse_unittest"]

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


_RAN = re.compile(
    r"^Ran (\d+) tests? in [\d.]+s\n+(OK|FAILED|NO TESTS RAN)\b(?: \(([^)]*)\))?", re.M
)
_UNITTEST_FAILED = re.compile(r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)", re.M)


def parse_unittest(text: str) -> RunCounts | None:
    runs = _RAN.findall(text)
    if not runs:
        return None
    ran, _, details = runs[-1]
    said = {key.strip(): int(value) for key, value in re.findall(r"([\w ]+)=(\d+)", details)}
    failed = said.get("failures", 0) + said.get("unexpected successes", 0)
    errors = said.get("errors", 0)
    skipped = said.get("skipped", 0) + said.get("expected failures", 0)
    passed = max(int(ran) - failed - errors - skipped, 0)
    counts = RunCounts("unittest", passed, failed, errors, skipped)
    # "test_add (calc_test.AddTest.test_add)" since Python 3.11, "(calc_test.AddTest)" before
    counts.failing_ids = unique(
        [
            where if where.endswith(f".{name}") else f"{where}.{name}"
            for name, where in _UNITTEST_FAILED.findall(text)
        ]
    )
    return counts
