"""Test counts read from a runner's own summary in its output, and the failing tests it names.
Pure functions over text; one module per runner family in `capture.testruns.runners`.

A count the output does not give is None, not 0 (`go test` without `-v` names only its
failures; `ok pkg` says no test failed, not how many passed): see `RunCounts`."""

from __future__ import annotations

import re
from collections.abc import Callable

from capture.testruns.runners.counts import RunCounts
from capture.testruns.runners.dart import parse_dart
from capture.testruns.runners.dotnet import parse_dotnet
from capture.testruns.runners.elixir import parse_exunit
from capture.testruns.runners.go import parse_go
from capture.testruns.runners.javascript import (
    parse_bun,
    parse_deno,
    parse_jest,
    parse_mocha,
    parse_node,
    parse_vitest,
)
from capture.testruns.runners.jvm import parse_gradle, parse_maven, parse_sbt
from capture.testruns.runners.native import parse_bazel, parse_ctest, parse_swift, parse_zig
from capture.testruns.runners.php import parse_phpunit
from capture.testruns.runners.python import parse_pytest, parse_unittest
from capture.testruns.runners.ruby import parse_rspec
from capture.testruns.runners.rust import parse_cargo

__all__ = ["PARSERS", "RunCounts", "parse_summary"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>78]")

#: Tried in this order; the first that finds its runner's summary wins. The ones whose
#: closing lines could be mistaken for another's come first (go's "ok pkg 0.1s" lines last
#: but one, mocha's "N passing" last). Each runs only when the text holds one of the strings
#: its summary cannot do without: a long log that no runner printed costs substring searches,
#: not twenty regular-expression scans.
PARSERS: tuple[tuple[tuple[str, ...], Callable[[str], RunCounts | None]], ...] = (
    ((" passed", " failed", " error", " skipped", "no tests ran"), parse_pytest),
    (("test result: ", "Summary [", "could not compile"), parse_cargo),
    (("Tests:",), parse_jest),
    (("Tests ",), parse_vitest),
    (("Ran ",), parse_unittest),
    (("Ran ",), parse_bun),
    ((" passed",), parse_deno),
    (("# tests ", "ℹ tests "), parse_node),
    (("Tests: ", "OK ("), parse_phpunit),
    ((" example",), parse_rspec),
    ((" failure",), parse_exunit),
    (("Tests run: ",), parse_maven),
    ((" completed",), parse_gradle),
    ((": Total ",), parse_sbt),
    (("Passed!", "Failed!", "Test summary: "), parse_dotnet),
    (("tests passed, ",), parse_ctest),
    (("passed",), parse_zig),
    (("Executed ", "Test run with "), parse_swift),
    ((" out of ",), parse_bazel),
    (("tests passed!", "tests failed.", "tests skipped."), parse_dart),
    (("--- ", "ok ", "FAIL", "?   "), parse_go),
    ((" passing (",), parse_mocha),
)


def clean(output: str) -> str:
    """The output as a log shows it: colours and cursor codes removed, `\\n` line ends (a
    terminal's redrawn line keeps its last state)."""
    text = _ANSI.sub("", output).replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))
    return text


def parse_summary(output: str) -> RunCounts | None:
    """Counts from the last summary a known runner printed, or None when none is recognised."""
    text = clean(output)
    for needles, parser in PARSERS:
        if any(needle in text for needle in needles):
            counts = parser(text)
            if counts is not None:
                return counts
    return None
