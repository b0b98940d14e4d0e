"""JavaScript and TypeScript runners: jest, vitest, bun test, deno test, node --test, mocha."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, count, unique

__all__ = ["parse_bun", "parse_deno", "parse_jest", "parse_mocha", "parse_node", "parse_vitest"]

# A duration a runner appends to a test's name: " 6ms", " (12 ms)", " [0.26ms]", " (888µs)".
_DURATION = re.compile(r"\s+[\[(]?\d+(?:\.\d+)?\s?(?:ms|s|µs|us|ns)[\])]?$")


def _name(text: str) -> str:
    return _DURATION.sub("", text.strip())


def _tally(line: str, runner: str, skipped: str) -> RunCounts:
    counts = RunCounts(runner)
    counts.passed = count(r"(\d+) passed", line)
    counts.failed = count(r"(\d+) failed", line)
    counts.skipped = count(rf"(\d+) (?:{skipped})", line)
    return counts


# jest: "Tests:       1 failed, 1 skipped, 4 passed, 6 total"; a failure is headed
# "  ● describe › test" (a test outside any describe has no "›").
_JEST = re.compile(r"^Tests:\s+(.*\d+ total)\s*$", re.MULTILINE)
_JEST_FAILED = re.compile(r"^  ● (.+?)\s*$", re.MULTILINE)
_JEST_FILE = re.compile(r"^\s*FAIL\s+(\S+)", re.MULTILINE)
_JEST_SUITE_BROKEN = "Test suite failed to run"


def parse_jest(text: str) -> RunCounts | None:
    found = _JEST.findall(text)
    if not found:
        return None
    counts = _tally(found[-1], "jest", "skipped|todo|pending")
    names = []
    broken = set()
    for m in _JEST_FAILED.finditer(text):
        name = m.group(1)
        if name == _JEST_SUITE_BROKEN:
            # a test file that does not load has no tests to count: one error, named by file
            files = _JEST_FILE.findall(text, 0, m.start())
            if files:
                names.append(files[-1].removeprefix("./"))
                broken.add(files[-1])
        elif name != "Console":
            names.append(_name(name))
    counts.errors = len(broken)
    counts.failing_ids = unique(names)
    return counts


# vitest: "      Tests  2 failed | 3 passed | 1 skipped (6)"; each failure is headed
# " FAIL  calc.test.js > calc > divides" (the tree above it repeats the last name only,
# "× divides 6ms", and older versions printed the full name there with its duration).
_VITEST = re.compile(r"^\s*Tests\s+((?:\d+ \w+(?: \| )?)+)\s*\(\d+\)", re.MULTILINE)
_VITEST_FAIL = re.compile(r"^\s*FAIL\s+(\S+ > .+?)\s*$", re.MULTILINE)
_VITEST_CROSS = re.compile(r"^\s*(?:×|✗)\s+(\S+ > .+?)\s*$", re.MULTILINE)
# a test file that did not load: " FAIL  broken/syntax.test.js [ broken/syntax.test.js ]"
_VITEST_SUITE = re.compile(r"^\s*FAIL\s+(\S+) \[ \S+ \]\s*$", re.MULTILINE)


def parse_vitest(text: str) -> RunCounts | None:
    found = _VITEST.findall(text)
    if not found:
        return None
    counts = _tally(found[-1], "vitest", "skipped|todo")
    suites = unique(_VITEST_SUITE.findall(text))
    counts.errors = len(suites)
    names = _VITEST_FAIL.findall(text) or _VITEST_CROSS.findall(text)
    counts.failing_ids = unique(suites + [_name(n) for n in names])
    return counts


# bun test: " 3 pass", " 1 skip", " 1 fail", ..., "Ran 5 tests across 1 file."
_BUN = re.compile(r"^Ran \d+ tests? across \d+ files?\.", re.MULTILINE)
# a failure is "(fail) calc > divides [0.26ms]" on a pipe, "✗ calc > divides" on a terminal
_BUN_FAILED = re.compile(r"^(?:\(fail\)|✗) (.+?)\s*$", re.MULTILINE)


def parse_bun(text: str) -> RunCounts | None:
    found = list(_BUN.finditer(text))
    if not found:
        return None
    block = text[: found[-1].start()]
    block = block[block.rfind("\n\n") :]  # the closing block after the last blank line
    counts = RunCounts("bun")
    counts.passed = count(r"^\s*(\d+) pass$", block)
    counts.failed = count(r"^\s*(\d+) fail$", block)
    counts.skipped = count(r"^\s*(\d+) (?:skip|todo)$", block)
    counts.errors = count(r"^\s*(\d+) errors?$", block)
    counts.failing_ids = unique([_name(n) for n in _BUN_FAILED.findall(text)])
    return counts


# deno test: "FAILED | 3 passed (1 step) | 1 failed | 1 ignored (24ms)" or "ok | 5 passed | ...";
# failures listed under " FAILURES " as "divides => ./calc_test.js:7:6".
_DENO = re.compile(r"^(?:ok|FAILED) \| (\d+ passed.*)$", re.MULTILINE)
_DENO_FAILED = re.compile(r"^(.+?) => \S+:\d+:\d+\s*$", re.MULTILINE)


def parse_deno(text: str) -> RunCounts | None:
    found = _DENO.findall(text)
    if not found:
        return None
    line = re.sub(r"\(\d+ steps?\)", "", found[-1])  # steps are parts of a counted test
    counts = _tally(line, "deno", "ignored")
    failures = text.rfind(" FAILURES ")
    listed = _DENO_FAILED.findall(text[failures:]) if failures >= 0 else []
    counts.failing_ids = unique(listed)
    return counts


# node --test: TAP ("# pass 3") or the spec reporter ("ℹ pass 3"); failures are TAP's
# "not ok N - name" (a suite's own "not ok" only repeats its tests') or spec's "✖ name (1ms)"
# under "✖ failing tests:".
_NODE = re.compile(r"^[#ℹ] tests (\d+)$", re.MULTILINE)
_NODE_TAP_FAILED = re.compile(r"^\s*not ok \d+ - (.+?)(?: # .*)?\n((?:\s+.*\n)*?)\s*\.\.\.", re.M)
_NODE_SPEC_FAILED = re.compile(r"^✖ (.+?)\s*$", re.MULTILINE)


def parse_node(text: str) -> RunCounts | None:
    found = list(_NODE.finditer(text))
    if not found:
        return None
    block = text[found[-1].start() :]
    counts = RunCounts("node")
    counts.passed = count(r"^[#ℹ] pass (\d+)$", block)
    counts.failed = count(r"^[#ℹ] fail (\d+)$", block)
    counts.errors = count(r"^[#ℹ] cancelled (\d+)$", block)
    counts.skipped = count(r"^[#ℹ] (?:skipped|todo) (\d+)$", block)
    spec = text.find("✖ failing tests:")
    if spec >= 0:
        names = [_name(n) for n in _NODE_SPEC_FAILED.findall(text[spec:])]
        names = [n for n in names if n != "failing tests:"]
    else:
        names = [
            name
            for name, details in _NODE_TAP_FAILED.findall(text)
            if "failureType: 'subtestsFailed'" not in details
        ]
    counts.failing_ids = unique(names)
    return counts


# mocha and friends: "  12 passing (30ms)", "  2 failing", "  1 pending"
_MOCHA = re.compile(r"^\s+(\d+) passing \(", re.MULTILINE)


_MOCHA_FAILING = re.compile(r"^\s+\d+ failing\s*$", re.MULTILINE)
_MOCHA_NUMBERED = re.compile(r"^\s+\d+\) (.+?)\s*$")


def parse_mocha(text: str) -> RunCounts | None:
    if not _MOCHA.search(text):
        return None
    counts = RunCounts("mocha")
    counts.passed = count(r"^\s+(\d+) passing", text)
    counts.failed = count(r"^\s+(\d+) failing", text)
    counts.skipped = count(r"^\s+(\d+) pending", text)
    counts.failing_ids = unique(_mocha_failures(text))
    return counts


def _mocha_failures(text: str) -> list[str]:
    """After "N failing", each failure's title path, one part a line down to the one ending
    in ":" ("  1) calc" / "       nested" / "         multiplies:"), joined as mocha's full
    title ("calc nested multiplies")."""
    heading = _MOCHA_FAILING.search(text)
    if heading is None:
        return []
    names = []
    lines = iter(text[heading.end() :].split("\n"))
    for line in lines:
        numbered = _MOCHA_NUMBERED.match(line)
        if numbered is None:
            continue
        parts = [numbered.group(1)]
        while not parts[-1].endswith(":"):
            part = next(lines, "").strip()
            if not part:
                break
            parts.append(part)
        names.append(" ".join(parts).removesuffix(":"))
    return names
