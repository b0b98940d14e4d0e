from __future__ import annotations

from capture.testruns.summaries import parse_summary

PYTEST = """\
tests/test_a.py .F.s                                                     [100%]
=========================== short test summary info ============================
FAILED tests/test_a.py::test_two - assert 1 == 2
ERROR tests/test_b.py::test_setup - RuntimeError
============ 1 failed, 2 passed, 1 skipped, 1 error in 0.12s ============
"""


def test_pytest() -> None:
    counts = parse_summary(PYTEST)
    assert counts is not None and counts.runner == "pytest"
    assert (counts.passed, counts.failed, counts.errors, counts.skipped) == (2, 1, 1, 1)
    assert counts.failing_ids == ["tests/test_a.py::test_two", "tests/test_b.py::test_setup"]


def test_pytest_quiet_and_colour() -> None:
    counts = parse_summary("\x1b[32m5 passed\x1b[0m\x1b[32m in 0.03s\x1b[0m\n")
    assert counts is not None and counts.passed == 5 and counts.failed == 0
    counts = parse_summary("=== no tests ran in 0.01s ===\n")
    assert counts is not None and counts.total == 0


def test_jest() -> None:
    out = (
        "  ● math › adds\n\n    expect(received).toBe(expected)\n\n"
        "Test Suites: 1 failed, 1 passed, 2 total\n"
        "Tests:       1 failed, 1 skipped, 4 passed, 6 total\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "jest"
    assert (counts.passed, counts.failed, counts.skipped) == (4, 1, 1)
    assert counts.failing_ids == ["math › adds"]


def test_vitest() -> None:
    out = (
        " FAIL  src/a.test.ts > sum > adds\n Test Files  1 failed (1)\n"
        "      Tests  1 failed | 3 passed | 1 skipped (5)\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "vitest"
    assert (counts.passed, counts.failed, counts.skipped) == (3, 1, 1)
    assert counts.failing_ids == ["src/a.test.ts > sum > adds"]


def test_cargo_sums_binaries() -> None:
    out = (
        "test tests::a ... ok\ntest tests::b ... FAILED\n"
        "test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out\n"
        "test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "cargo"
    assert (counts.passed, counts.failed, counts.skipped) == (7, 1, 2)
    assert counts.failing_ids == ["tests::b"]


def test_nextest() -> None:
    out = (
        "    FAIL [   0.003s] crate::tests::b\n"
        "     Summary [   0.010s] 5 tests run: 4 passed, 1 failed, 2 skipped\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "nextest"
    assert (counts.passed, counts.failed, counts.skipped) == (4, 1, 2)


def test_go() -> None:
    out = (
        "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\n"
        "--- SKIP: TestC (0.00s)\nFAIL\nFAIL\texample.com/m\t0.002s\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "go"
    assert (counts.passed, counts.failed, counts.skipped) == (1, 1, 1)
    assert counts.failing_ids == ["TestB"]


def test_go_package_that_does_not_build() -> None:
    out = (
        "# example.com/m/broken [example.com/m/broken.test]\n"
        'broken/b.go:3:23: cannot use "s" (untyped string constant) as int value\n'
        "FAIL\texample.com/m/broken [build failed]\n"
        "--- FAIL: TestAddWrong (0.00s)\n    calc_test.go:13: Add(1, 2) = 3, want 4\n"
        "FAIL\nFAIL\texample.com/m/calc\t0.003s\nFAIL\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "go"
    # without -v go names only failures: how many passed is unknown, not 0
    assert (counts.passed, counts.failed, counts.errors) == (None, 1, 1)
    assert counts.failing_ids == ["example.com/m/broken", "TestAddWrong"]
    only_broken = parse_summary("FAIL\texample.com/m/broken [setup failed]\nFAIL\n")
    assert only_broken is not None and only_broken.errors == 1


def test_mocha() -> None:
    counts = parse_summary("  12 passing (30ms)\n  2 failing\n  1 pending\n")
    assert counts is not None and (counts.passed, counts.failed, counts.skipped) == (12, 2, 1)


def test_unknown_output() -> None:
    assert parse_summary("hello world\nall good\n") is None
    assert parse_summary("") is None


def test_gradle() -> None:
    out = (
        "> Task :app:test\n\nCalcTest > divides() FAILED\n"
        "    org.opentest4j.AssertionFailedError at CalcTest.java:16\n\n"
        "5 tests completed, 1 failed, 1 skipped\n\n> Task :app:test FAILED\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "gradle"
    assert (counts.passed, counts.failed, counts.skipped) == (3, 1, 1)
    assert counts.failing_ids == ["CalcTest > divides()"]


def test_dotnet_9_summary() -> None:
    out = (
        "  Failed Calc.Tests.Divides [3 ms]\n  Error Message:\n   Assert.Equal() Failure\n"
        "Test summary: total: 5, failed: 1, succeeded: 3, skipped: 1, duration: 1.2s\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "dotnet"
    assert (counts.passed, counts.failed, counts.skipped) == (3, 1, 1)
    assert counts.failing_ids == ["Calc.Tests.Divides"]


def test_swift_testing() -> None:
    out = (
        "✘ Test divides() recorded an issue at CalcTests.swift:9:5: Expectation failed\n"
        "✘ Test divides() failed after 0.001 seconds with 1 issue.\n"
        '➜ Test later() skipped: "not yet"\n'
        "✘ Test run with 4 tests in 1 suite failed after 0.002 seconds with 1 issue.\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "swift"
    assert (counts.passed, counts.failed, counts.skipped) == (2, 1, 1)
    assert counts.failing_ids == ["divides()"]


def test_zig_build_summary_and_all_passed() -> None:
    out = "Build Summary: 3/5 steps succeeded; 1 failed; 2/4 tests passed; 1 skipped; 1 failed\n"
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "zig"
    assert (counts.passed, counts.failed, counts.skipped) == (2, 1, 1)
    counts = parse_summary(
        "1/2 calc.test.adds...OK\n2/2 calc.test.subs...OK\nAll 2 tests passed.\n"
    )
    assert counts is not None and (counts.passed, counts.failed) == (2, 0)


def test_go_cached_and_no_tests_lines() -> None:
    out = "ok  \texample.com/m/a\t(cached)\n?   \texample.com/m/b\t[no test files]\n"
    counts = parse_summary(out)
    assert counts is not None and counts.runner == "go"
    assert (counts.passed, counts.failed, counts.errors, counts.skipped) == (None, 0, 0, None)
    assert counts.total is None and not counts.counts_known


def test_vitest_older_tree_with_full_names_and_durations() -> None:
    out = (
        " ❯ src/a.test.ts  (2 tests | 1 failed) 8ms\n"
        "   × src/a.test.ts > sum > adds 6ms\n"
        " Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)\n"
    )
    counts = parse_summary(out)
    assert counts is not None and counts.failing_ids == ["src/a.test.ts > sum > adds"]


def test_exunit_excluded_tests_are_not_counted() -> None:
    # mix test test/calc_test.exs:4 on the captured mix project (Elixir 1.14): one test ran
    counts = parse_summary("Finished in 0.00 seconds\n5 tests, 0 failures, 4 excluded\n")
    assert counts is not None and counts.runner == "exunit"
    assert (counts.passed, counts.failed, counts.skipped) == (1, 0, 0)
    counts = parse_summary("3 doctests, 5 tests, 1 failure, 1 invalid\n")
    assert counts is not None and (counts.passed, counts.failed, counts.errors) == (6, 1, 1)


def test_unittest_summaries_give_counts_and_failing_ids() -> None:
    # as `python3 -m unittest -q` printed it in a real agent session
    failed = (
        "======================================================================\n"
        "FAIL: test_add (test_calc.AddTest.test_add)\n"
        "----------------------------------------------------------------------\n"
        "AssertionError: -1 != 5\n\n"
        "----------------------------------------------------------------------\n"
        "Ran 3 tests in 0.001s\n\nFAILED (failures=1, skipped=1)\n"
    )
    counts = parse_summary(failed)
    assert counts is not None
    assert (counts.runner, counts.passed, counts.failed, counts.errors, counts.skipped) == (
        "unittest",
        1,
        1,
        0,
        1,
    )
    assert counts.failing_ids == ["test_calc.AddTest.test_add"]
    ok = parse_summary("-----\nRan 2 tests in 0.000s\n\nOK\n")
    assert ok is not None and (ok.passed, ok.failed) == (2, 0)
    # before Python 3.11 the header named the class only
    old = parse_summary(
        "ERROR: test_zero (test_calc.AddTest)\nRan 1 test in 0.0s\n\nFAILED (errors=1)"
    )
    assert (
        old is not None and old.errors == 1 and old.failing_ids == ["test_calc.AddTest.test_zero"]
    )
