"""`go test`: per-test lines (`--- PASS/FAIL/SKIP: Name`, subtests indented) and one line per
package (`ok  pkg 0.01s`, `FAIL pkg 0.01s`, `FAIL pkg [build failed]`, `? pkg [no test files]`).

Without `-v` go prints only the failing tests, so passed and skipped are unknown (None); an
`ok` package says that none failed. A package that FAILed without naming a failing test (a
panic in init or TestMain, a build or setup failure) counts as one error, named by package."""

from __future__ import annotations

import json
import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_go"]

_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.MULTILINE)
_VERBOSE = re.compile(r"^=== (?:RUN|CONT|PAUSE)\s", re.MULTILINE)
# ok/FAIL/? then the package, then a time, "(cached)" or a bracketed note
_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+(\S+)\s+(?:[\d.]+s|\(cached\)|\[[^\]\n]*\])", re.MULTILINE)


# go test -json: one event a line, {"Action": "pass", "Package": ..., "Test": ...}; a package
# that does not build still gets a plain "FAIL pkg [build failed]" line among them.
_JSON_EVENT = re.compile(r'^\{"Time":"[^"]*","Action":"(?:run|pass|fail|skip|output)"', re.M)


def parse_go(text: str) -> RunCounts | None:
    if _JSON_EVENT.search(text):
        return _parse_json(text)
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


def _parse_json(text: str) -> RunCounts:
    counts = RunCounts("go")
    passed = failed = skipped = 0
    failing: list[str] = []
    named_failures: set[str] = set()
    failed_packages: list[str] = []
    for line in text.splitlines():
        broken = _PACKAGE.match(line)
        if broken and broken.group(1) == "FAIL":
            failed_packages.append(broken.group(2))
            failing.append(broken.group(2))
            continue
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        action, package, test = event.get("Action"), event.get("Package"), event.get("Test")
        if not isinstance(test, str):
            if action == "fail" and isinstance(package, str):
                failed_packages.append(package)
                failing.append(package)
            continue
        if action == "pass":
            passed += 1
        elif action == "fail":
            failed += 1
            failing.append(test)
            named_failures.add(str(package))
        elif action == "skip":
            skipped += 1
    # a failed package is an error only when none of its tests is named as failing
    errors = len(set(failed_packages) - named_failures)
    failing = [f for f in failing if f not in named_failures]
    counts.passed, counts.failed, counts.errors, counts.skipped = passed, failed, errors, skipped
    counts.failing_ids = unique(failing)
    return counts
