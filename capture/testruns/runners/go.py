"""`go test`: per-test lines (`--- PASS/FAIL/SKIP: Name`, subtests indented) and one line per
package (`ok  pkg 0.01s`, `FAIL pkg 0.01s`, `FAIL pkg [build failed]`, `? pkg [no test files]`).

Without `-v` go prints only the failing tests, so passed and skipped are unknown (None); an
`ok` package says that none failed. A package that FAILed without naming a failing test (a
panic in init or TestMain, a build or setup failure) counts as one error, named by package."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_go"]

_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.MULTILINE)
_VERBOSE = re.compile(r"^=== (?:RUN|CONT|PAUSE)\s", re.MULTILINE)
# ok/FAIL/? then the package, then a time, "(cached)" or a bracketed note
_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[[^\]\n]*\])", re.MULTILINE)


def parse_go(text: str) -> RunCounts | None:
    packages = list(_PACKAGE.finditer(text))
    results = _RESULT.findall(text)
    if not packages and not results:
        return None
    verbose = _VERBOSE.search(text) is not None
    counts = RunCounts("go", passed=0 if verbose else None, skipped=0 if verbose else None)
    failing: list[str] = []
    start = 0
    # A package's test lines come before its own ok/FAIL line (go prints each package's
    # output whole), so a FAIL line names the failures since the previous package line.
    segments = []
    for m in packages:
        segments.append((m.group(1), m.group(2), text[start : m.start()]))
        start = m.end()
    segments.append(("", "", text[start:]))
    for status, package, body in segments:
        named = 0
        for result, name in _RESULT.findall(body):
            if result == "FAIL":
                counts.failed = (counts.failed or 0) + 1
                failing.append(name)
                named += 1
            elif verbose and result == "PASS":
                counts.passed = (counts.passed or 0) + 1
            elif verbose:
                counts.skipped = (counts.skipped or 0) + 1
        if status == "FAIL" and named == 0:
            counts.errors = (counts.errors or 0) + 1
            failing.append(package)
    counts.failing_ids = unique(failing)
    return counts
