"""Each runner's real output (tests/fixtures/runner-output/) read through `parse_summary`.

The expected figures were written from reading each output file, not from the parser: a
count that the output does not give is None (go test without -v names only its failures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from capture.testruns.summaries import parse_summary

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "runner-output"

Expected = tuple[str, int | None, int | None, int | None, int | None, list[str]]

#: folder/variant -> (runner, passed, failed, errors, skipped, failing ids). The variant is
#: the file name before ".plain.txt" / ".tty.txt"; both must read the same.
CAPTURED: dict[str, Expected] = {
    "pytest/run": (
        "pytest",
        3,
        1,
        1,
        1,
        ["test_calc.py::test_divides", "test_calc.py::test_uses_broken"],
    ),
    "pytest/quiet": (
        "pytest",
        3,
        1,
        1,
        1,
        ["test_calc.py::test_divides", "test_calc.py::test_uses_broken"],
    ),
    "pytest/collect-error": ("pytest", 0, 0, 1, 0, ["broken/test_imports.py"]),
    "jest/broken": ("jest", 3, 2, 1, 1, ["calc › divides", "strings", "broken/syntax.test.js"]),
    "vitest/broken": (
        "vitest",
        3,
        2,
        1,
        1,
        [
            "broken/syntax.test.js",
            "calc.test.js > calc > divides",
            "calc.test.js > calc > nested > slow",
        ],
    ),
    "jest/run": ("jest", 3, 2, 0, 1, ["calc › divides", "strings"]),
    "jest-29/run": ("jest", 3, 2, 0, 1, ["calc › divides", "strings"]),
    "vitest/run": (
        "vitest",
        3,
        2,
        0,
        1,
        ["calc.test.js > calc > divides", "calc.test.js > calc > nested > slow"],
    ),
    # vitest 3's tree repeats each failure without its file and with its duration
    # ("× calc > divides 4ms"): the ids come from the "FAIL  file > ..." headings only
    "vitest-3/run": (
        "vitest",
        3,
        2,
        0,
        1,
        ["calc.test.js > calc > divides", "calc.test.js > calc > nested > slow"],
    ),
    "vitest-1/run": (
        "vitest",
        3,
        2,
        0,
        1,
        ["calc.test.js > calc > divides", "calc.test.js > calc > nested > slow"],
    ),
    "bun/run": ("bun", 3, 1, 0, 1, ["calc > divides"]),
    "deno/run": ("deno", 3, 1, 0, 1, ["divides"]),
    "mocha/run": ("mocha", 3, 2, 0, 1, ["calc divides", "calc nested multiplies"]),
    "node/spec": ("node", 3, 1, 0, 1, ["divides"]),
    "node/tap": ("node", 3, 1, 0, 1, ["divides"]),
    "go/all": (
        "go",
        None,
        4,
        1,
        None,
        ["TestPanics", "example.com/calc/broken", "TestAreaWrong", "TestTable", "TestTable/zero"],
    ),
    "go/verbose": (
        "go",
        4,
        4,
        1,
        1,
        ["TestPanics", "example.com/calc/broken", "TestAreaWrong", "TestTable", "TestTable/zero"],
    ),
    "go/json": (
        "go",
        4,
        4,
        1,
        1,
        ["TestPanics", "example.com/calc/broken", "TestAreaWrong", "TestTable/zero", "TestTable"],
    ),
    "go/ok-only": ("go", None, 0, 0, None, []),
    "go/ok-only-verbose": ("go", 2, 0, 0, 0, []),
    "go/fail-only": ("go", None, 3, 0, None, ["TestAreaWrong", "TestTable", "TestTable/zero"]),
    "cargo/run": ("cargo", 4, 1, 0, 1, ["tests::divides"]),
    "cargo/broken": ("cargo", 0, 0, 1, 0, ["calc (lib test)"]),
    "rspec/run": ("rspec", 3, 1, 0, 1, ["calc_spec.rb:12"]),
    "rspec/broken": ("rspec", 0, 0, 1, 0, ["broken_spec.rb"]),
    "phpunit/run": ("phpunit", 3, 1, 1, 1, ["CalcTest::testBroken", "CalcTest::testDivides"]),
    "mix/run": ("exunit", 3, 1, 0, 1, ["test divides (CalcTest)"]),
    "ctest/run": ("ctest", 3, 1, 0, 1, ["divides"]),
    "zig/test": ("zig", 2, 1, 0, 1, ["divides"]),
    "zig/build": ("zig", 2, 1, 0, 1, ["divides"]),
    "zig/build-summary": ("zig", 2, 1, 0, 1, ["divides"]),
    "bazel/run": ("bazel", 2, 1, 0, 1, ["//calc:divides_test"]),
    "bazel/cached": ("bazel", 2, 1, 0, 1, ["//calc:divides_test"]),
    "gradle/run": ("gradle", 2, 2, 0, 1, ["calc.CalcTest > broken", "calc.CalcTest > divides"]),
    "maven/run": (
        "surefire",
        3,
        1,
        1,
        1,
        ["com.example.CalcTest.broken", "com.example.CalcTest.divides"],
    ),
    "maven/colour": (
        "surefire",
        3,
        1,
        1,
        1,
        ["com.example.CalcTest.broken", "com.example.CalcTest.divides"],
    ),
}

#: Output pasted into public repositories (public/PROVENANCE.md), for runners not installable here.
PUBLIC: dict[str, Expected] = {
    "swift-xctest.txt": (
        "swift",
        4,
        1,
        0,
        0,
        ["XCTestCase.the test suite, when running another example, should register errors"],
    ),
    "sbt-scalatest.txt": (
        "sbt",
        0,
        8,
        0,
        0,
        ["dinocpu.ALUControlTesterLab1", "dinocpu.SingleCycleCPUTesterLab1"],
    ),
    "sbt-scalatest-named.txt": ("sbt", 1, 1, 0, 0, ["fail and show diff"]),
    "bazel.txt": ("bazel", 109, 1, 0, 0, ["//compiler/back_end/cpp:alignments_test"]),
    "bazel-cached.txt": ("bazel", 134, 1, 0, 0, ["//private/underlay/ebpf:portfilter_test"]),
    "dotnet.txt": (
        "dotnet",
        30,
        4,
        0,
        0,
        [
            "ControlServer.Tests.StoppedRebuildExitTests.AHandoffRecordWhoseJourneyIsNoLongerBlockedAsksTheVehicleForNothing",
            "ControlServer.Tests.StoppedRebuildExitTests.APartialHandoffLetsThePersonGiveTheRestUp",
        ],
    ),
    "flutter.txt": (
        "dart",
        14,
        1,
        0,
        0,
        ["CadastroScreen navega para LoginScreen ao tocar no link"],
    ),
    "flutter-passed.txt": ("dart", 3, 0, 0, 0, []),
}


def _figures(text: str) -> Expected:
    counts = parse_summary(text)
    assert counts is not None, "no summary recognised"
    return (
        counts.runner,
        counts.passed,
        counts.failed,
        counts.errors,
        counts.skipped,
        counts.failing_ids,
    )


@pytest.mark.parametrize("mode", ["plain", "tty"])
@pytest.mark.parametrize("variant", sorted(CAPTURED))
def test_captured_output(variant: str, mode: str) -> None:
    path = FIXTURES / f"{variant}.{mode}.txt"
    text = path.read_bytes().decode("utf-8", "replace")
    assert _figures(text) == CAPTURED[variant]


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_output(name: str) -> None:
    assert _figures((FIXTURES / "public" / name).read_text()) == PUBLIC[name]


def test_every_captured_file_is_covered_and_recorded() -> None:
    """No fixture left untested, and each has its command and exit code in runs.json."""
    on_disk = {
        f"{p.parent.name}/{p.name.split('.')[0]}"
        for p in FIXTURES.glob("*/*.txt")
        if p.parent.name != "public"
    }
    assert on_disk == set(CAPTURED)
    for variant in CAPTURED:
        runner, name = variant.split("/")
        runs = json.loads((FIXTURES / runner / "runs.json").read_text())
        assert {f"{name}.plain.txt", f"{name}.tty.txt"} <= set(runs)
        assert (FIXTURES / runner / "PROVENANCE.md").exists()
    assert set(PUBLIC) == {p.name for p in (FIXTURES / "public").glob("*.txt")}
