"""Where a run's results come from, the plugin's hand-over lines, and the watcher's decisions
(batches, start times, runs already recorded) — without processes or files."""

from __future__ import annotations

from capture.model import CaseResult, TestRunInput
from capture.testruns.junit_files import (
    Batches,
    covered_by_run,
    report_dedupe_key,
    report_started_at,
)
from capture.testruns.junit_xml import JunitReport
from capture.testruns.results import (
    PluginSession,
    choose_results,
    decode_sessions,
    encode_session,
    fill_run,
)
from capture.testruns.summaries import RunCounts


def test_plugin_beats_junit_beats_summary() -> None:
    summary = RunCounts("pytest", passed=9, failed=1, failing_ids=["t.py::x"])
    junit = JunitReport("surefire", passed=3, failed=0, cases=[CaseResult("A.b", "passed")])
    session = PluginSession(passed=2, failed=1, cases=[CaseResult("t.py::y", "failed", "t.py")])
    assert choose_results(sessions=[session], junit=junit, summary=summary).results_from == "plugin"
    from_junit = choose_results(junit=junit, report_paths=["a.xml", "b.xml"], summary=summary)
    assert (from_junit.results_from, from_junit.runner, from_junit.report) == (
        "junit",
        "surefire",
        "a.xml, b.xml",
    )
    from_summary = choose_results(summary=summary)
    assert (from_summary.results_from, from_summary.passed, from_summary.failing_ids) == (
        "summary",
        9,
        ["t.py::x"],
    )
    nothing = choose_results()
    assert nothing.results_from is None and nothing.passed is None


def test_counts_a_summary_does_not_give_stay_unknown_on_the_run() -> None:
    from capture.testruns.summaries import parse_summary

    summary = parse_summary("ok  \texample.com/calc/calc\t0.001s\n")
    assert summary is not None
    run = fill_run(TestRunInput("go test ./calc", "wrapper", 0.0), choose_results(summary=summary))
    assert (run.runner, run.results_from) == ("go", "summary")
    assert (run.passed, run.failed, run.errors, run.skipped) == (None, 0, 0, None)


def test_sessions_are_summed_and_failures_listed() -> None:
    a = PluginSession(passed=2, failed=1, cases=[CaseResult("a.py::f", "failed", "a.py")])
    b = PluginSession(errors=1, skipped=3, cases=[CaseResult("b.py::e", "error", "b.py")])
    results = choose_results(sessions=[a, b])
    assert (results.passed, results.failed, results.errors, results.skipped) == (2, 1, 1, 3)
    assert results.failing_ids == ["a.py::f", "b.py::e"]
    run = fill_run(TestRunInput("pytest", "wrapper", 1.0), results)
    assert run.runner == "pytest" and run.cases == results.cases and run.failed == 1


def test_session_lines_round_trip_and_torn_lines_are_skipped() -> None:
    session = PluginSession(
        passed=1,
        failed=1,
        exit_code=1,
        cases=[
            CaseResult("t.py::ok", "passed", "t.py", None, 0.5),
            CaseResult("t.py::bad", "failed", "t.py", None, None),
        ],
    )
    line = encode_session(session)
    text = line + "\n" + line[: len(line) // 2] + "\n" + '["not", "an object"]\n'
    (decoded,) = decode_sessions(text)
    assert decoded == session
    assert decode_sessions('{"passed": -3, "cases": [["x", "exploded", null, 1]]}') == [
        PluginSession()
    ]


def test_batches_wait_for_a_quiet_directory() -> None:
    batches = Batches(quiet=1.0)
    batches.add("/ws/target/surefire-reports/TEST-A.xml", 10.0)
    batches.add("/ws/junit.xml", 10.2)
    batches.add("/ws/target/surefire-reports/TEST-B.xml", 10.6)
    assert batches.due(11.0) == []
    assert batches.due(11.2) == [["/ws/junit.xml"]]
    batches.add("/ws/target/surefire-reports/TEST-A.xml", 11.3)  # rewritten: still one file
    assert batches.due(12.0) == []
    assert batches.due(12.3) == [
        ["/ws/target/surefire-reports/TEST-A.xml", "/ws/target/surefire-reports/TEST-B.xml"]
    ]
    assert not batches and batches.due(99.0) == []


def test_start_time_and_runs_already_recorded() -> None:
    assert report_started_at([(100.0, 4.0), (103.0, 1.0), (110.0, None)]) == 96.0
    runs = [(50.0, 5.0), (95.0, 10.0)]
    assert covered_by_run([100.0, 104.0], runs)
    assert not covered_by_run([100.0, 120.0], runs)  # the second file outlived every run
    assert not covered_by_run([80.0], runs)
    assert covered_by_run([56.5], runs)  # written just after the run's end: slack
    assert not covered_by_run([1.0], [])


def test_dedupe_key_follows_what_was_written() -> None:
    one = report_dedupe_key([("/ws/a.xml", 1, 10), ("/ws/b.xml", 2, 20)])
    assert one == report_dedupe_key([("/ws/b.xml", 2, 20), ("/ws/a.xml", 1, 10)])
    assert one != report_dedupe_key([("/ws/a.xml", 3, 10), ("/ws/b.xml", 2, 20)])
    assert one.startswith("junit:")
