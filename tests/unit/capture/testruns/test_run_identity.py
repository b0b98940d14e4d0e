"""Whether two reports of a test run are one execution (`capture.testruns.identity`)."""

from __future__ import annotations

from capture.model import CaseResult, TestRunInput
from capture.testruns.identity import (
    END_GAP_S,
    START_LAG_S,
    RunTimes,
    best_other,
    best_shell,
    merge_runs,
    same_execution,
    same_runner,
    seen_by,
    shell_runner,
    wrapped_command,
)

T = 1_800_000_000.0


def test_a_run_inside_the_shell_call_is_that_call() -> None:
    shell = RunTimes("h", T, 2.0, "pytest")
    assert same_execution(shell, RunTimes("p", T + 0.3, 1.5, "pytest"))
    assert same_execution(shell, RunTimes("p", T + 0.3, 1.5, None))  # a report names no runner


def test_another_runner_or_time_is_another_execution() -> None:
    shell = RunTimes("h", T, 2.0, "pytest")
    assert not same_execution(shell, RunTimes("p", T + 0.3, 1.5, "jest"))
    assert not same_execution(shell, RunTimes("p", T + 5.0, 1.0, "pytest"))
    assert not same_execution(shell, RunTimes("p", T - 5.0, 1.0, "pytest"))


def test_runner_names_from_commands_summaries_and_reports_agree_when_they_mean_one() -> None:
    assert same_runner("go test", "go")  # `go test` in the shell, go-junit-report's file
    assert same_runner("maven", "surefire") and same_runner("gradle", "surefire")
    assert same_runner("cargo test", "cargo") and same_runner("nextest", "cargo")
    assert same_runner("npm test", "jest") and same_runner("make test", "pytest")  # scripts
    assert same_runner("pytest", "junit") and same_runner(None, "pytest")
    assert not same_runner("pytest", "jest") and not same_runner("go test", "surefire")
    # every runner a command names is known: a mix run is never merged with a pytest report
    assert same_runner("mix test", "exunit") and not same_runner("mix test", "pytest")
    assert same_runner("flutter test", "dart") and not same_runner("bun test", "jest")
    shell = RunTimes("h", T, 2.0, "go test")
    assert same_execution(shell, RunTimes("j", T + 0.3, 1.5, "go"))
    assert not same_execution(shell, RunTimes("j", T + 0.3, 1.5, "surefire"))


def test_a_run_that_began_after_the_report_is_never_the_calls() -> None:
    # a quick run of the next call may end within the slack after this report
    assert not same_execution(RunTimes("h", T, 2.0, None), RunTimes("p", T + 2.1, 0.3, None))
    assert not same_execution(RunTimes("h", T, None, None), RunTimes("p", T + 0.1, 0.3, None))
    assert same_execution(RunTimes("h", T, None, None), RunTimes("p", T - 0.5, 0.4, None))


def test_the_shells_start_may_lag_the_run_by_the_hooks_own_delay() -> None:
    # report time minus duration: late by the time the agent took to call the hook
    shell = RunTimes("h", T, 2.0, "pytest")
    assert same_execution(shell, RunTimes("w", T - START_LAG_S + 0.1, 2.0, "pytest"))
    assert not same_execution(shell, RunTimes("w", T - START_LAG_S - 0.1, 2.0, "pytest"))


def test_without_a_duration_the_run_must_end_just_before_the_report() -> None:
    shell = RunTimes("h", T, None, "pytest")
    assert same_execution(shell, RunTimes("p", T - 3.0, 2.5, "pytest"))
    assert not same_execution(shell, RunTimes("p", T - END_GAP_S - 5, 1.0, "pytest"))
    assert not same_execution(shell, RunTimes("p", T + 2.0, 1.0, "pytest"))


def test_two_runs_in_quick_succession_each_find_their_own_call() -> None:
    first, second = RunTimes("p1", T + 0.2, 0.5, "pytest"), RunTimes("p2", T + 1.2, 0.5, "pytest")
    h1, h2 = RunTimes("h1", T, 1.0, "pytest"), RunTimes("h2", T + 1.05, 0.9, "pytest")
    assert best_other(h1, [first, second]) == "p1"
    assert best_other(h2, [first, second]) == "p2"
    assert best_shell(first, [h1, h2]) == "h1"
    assert best_shell(second, [h1, h2]) == "h2"
    # no durations: the closest end wins
    b1, b2 = RunTimes("b1", T + 0.8, None, None), RunTimes("b2", T + 1.8, None, None)
    assert best_shell(first, [b1, b2]) == "b1"
    assert best_other(b2, [first, second]) == "p2"


def test_capture_run_names_the_runner_it_wraps() -> None:
    assert wrapped_command("capture run --name e2e -- pytest -q") == "pytest -q"
    assert wrapped_command("cd x && capture run pytest") == "pytest"
    assert wrapped_command("ls") is None
    assert shell_runner("capture run -- python -m pytest") == "pytest"
    assert shell_runner("pytest -q") == "pytest"
    assert shell_runner("capture report") is None


def test_seen_by_is_in_report_order_whenever_applied() -> None:
    assert seen_by("pytest-plugin", T, "hook", T + 1) == "pytest-plugin,hook"
    assert seen_by("junit-file", T + 1, "hook", T) == "hook,junit-file"
    assert seen_by("hook", T, "junit-file", T + 1) == "hook,junit-file"
    assert seen_by("pytest-plugin,hook", T, "hook", T + 1) == "pytest-plugin,hook"


def test_merge_keeps_the_richer_results_and_the_shell_line() -> None:
    shell = TestRunInput(
        "python -m pytest -q",
        "hook",
        T,
        duration_s=2.0,
        exit_code=1,
        passed=1,
        failed=1,
        failing_ids=["tests/test_a.py::test_b"],
        dedupe_key="claude-code:toolu_1",
    )
    case = CaseResult("tests/test_a.py::test_b", "failed", "tests/test_a.py")
    plugin = TestRunInput(
        "pytest -q",
        "pytest-plugin",
        T + 0.4,
        duration_s=1.2,
        exit_code=1,
        passed=1,
        failed=1,
        runner="pytest",
        results_from="plugin",
        cases=[case],
    )
    merged = merge_runs(shell, plugin)
    assert (merged.source, merged.command, merged.started_at) == (
        "pytest-plugin",
        shell.command,
        T + 0.4,
    )
    assert merged.cases == [case] and merged.results_from == "plugin"
    assert merged.dedupe_key == "claude-code:toolu_1"  # the plugin had none
    junit = TestRunInput("junit.xml", "junit-file", T + 0.4, duration_s=1.0, passed=2, failed=0)
    merged = merge_runs(shell, junit)
    assert merged.exit_code == 1  # the report knew none
    assert (merged.passed, merged.failed) == (2, 0)
    bare = TestRunInput("pytest -q", "wrapper", T + 0.1, duration_s=1.5, exit_code=1)
    assert merge_runs(shell, bare).failing_ids == ["tests/test_a.py::test_b"]
