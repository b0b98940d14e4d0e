"""The linking rules, without a database: which episodes a run is evidence for, and what an
episode's runs say about it."""

from __future__ import annotations

import pytest

from capture.testruns.linking import (
    FAILING,
    INCOMPLETE,
    LINK_LATE,
    LINK_OPEN,
    NO_TESTS,
    PASSING,
    EpisodeTimes,
    FailingTest,
    LinkedRun,
    episodes_to_link,
    run_status,
    summarize_tests,
)

DAY = 86400.0


def test_open_episodes_with_an_edit_before_the_run_are_linked() -> None:
    episodes = [
        EpisodeTimes("a", 10.0, 20.0, None),  # open
        EpisodeTimes("b", 30.0, 30.0, None),  # first edit after the run started
        EpisodeTimes("c", 5.0, 6.0, 50.0),  # settled after the run started: still open then
    ]
    assert episodes_to_link(episodes, 25.0, DAY) == [("a", LINK_OPEN), ("c", LINK_OPEN)]


def test_only_the_last_settled_episode_within_the_late_window_is_added() -> None:
    episodes = [
        EpisodeTimes("old", 1.0, 2.0, 100.0),
        EpisodeTimes("recent", 3.0, 4.0, 200.0),
        EpisodeTimes("open", 5.0, 5.0, None),
    ]
    assert episodes_to_link(episodes, 300.0, DAY) == [("open", LINK_OPEN), ("recent", LINK_LATE)]
    # Past the late window of its last edit, the settled episode is not linked.
    assert episodes_to_link(episodes, 4.0 + DAY + 1, DAY) == [("open", LINK_OPEN)]


def test_no_episode_no_link() -> None:
    assert episodes_to_link([], 10.0, DAY) == []


@pytest.mark.parametrize(
    ("kwargs", "status"),
    [
        ({"exit_code": 0, "passed": 3, "failed": 0, "errors": 0}, PASSING),
        ({"exit_code": 1, "passed": 3, "failed": 1, "errors": 0}, FAILING),
        ({"exit_code": 2, "passed": 0, "failed": 0, "errors": 1, "runner": "pytest"}, FAILING),
        ({"exit_code": 2, "passed": 4, "failed": 0, "errors": 0, "runner": "pytest"}, INCOMPLETE),
        ({"exit_code": 5, "passed": 0, "failed": 0, "errors": 0, "runner": "pytest"}, NO_TESTS),
        ({"exit_code": 130, "passed": None, "failed": None, "errors": None}, INCOMPLETE),
        ({"exit_code": 137, "passed": 10, "failed": 0, "errors": 0}, INCOMPLETE),
        # Interrupted after a failure: the failure still counts.
        ({"exit_code": 130, "passed": 1, "failed": 1, "errors": 0}, FAILING),
        ({"exit_code": 0, "passed": None, "failed": None, "errors": None}, PASSING),
        ({"exit_code": 2, "passed": None, "failed": None, "errors": None}, FAILING),
        ({"exit_code": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 3}, NO_TESTS),
        ({"exit_code": None, "passed": 2, "failed": 0, "errors": 0}, PASSING),
        ({"exit_code": None, "passed": 0, "failed": 0, "errors": 0}, NO_TESTS),
    ],
)
def test_run_status(kwargs: dict, status: str) -> None:
    assert run_status(**kwargs) == status


def run(
    run_id: str, at: float, status: str, link: str = LINK_OPEN, failing: tuple = ()
) -> LinkedRun:
    return LinkedRun(run_id, at, status, link, failing)


def test_failing_then_passing() -> None:
    summary = summarize_tests(
        [run("r2", 20, PASSING), run("r1", 10, FAILING)], edited_files={"src/a.py"}, settled_at=None
    )
    assert summary.first_run_after and summary.first_run_after.run_id == "r1"
    assert summary.last_run_before_settling and summary.last_run_before_settling.run_id == "r2"
    assert summary.transition == "failing_to_passing"
    assert summary.runs == 2
    assert not summary.tests_edited_by_agent


def test_passing_then_failing_and_runs_without_a_verdict_are_skipped() -> None:
    summary = summarize_tests(
        [
            run("r0", 5, INCOMPLETE),
            run("r1", 10, PASSING),
            run("r2", 20, NO_TESTS),
            run("r3", 30, FAILING),
            run("r4", 40, INCOMPLETE),
        ],
        edited_files={"a.py"},
        settled_at=None,
    )
    assert summary.first_run_after and summary.first_run_after.run_id == "r1"
    assert summary.last_run_before_settling and summary.last_run_before_settling.run_id == "r3"
    assert summary.transition == "passing_to_failing"
    assert summary.runs == 5


def test_last_run_before_settling_ignores_runs_after_it_and_late_links() -> None:
    summary = summarize_tests(
        [run("r1", 10, FAILING), run("r2", 20, FAILING), run("r3", 40, PASSING, LINK_LATE)],
        edited_files={"a.py"},
        settled_at=30,
    )
    assert summary.last_run_before_settling and summary.last_run_before_settling.run_id == "r2"
    assert summary.transition == "still_failing"


def test_one_run_has_no_transition_and_a_late_only_run_is_first_after() -> None:
    one = summarize_tests([run("r1", 10, PASSING)], edited_files=set(), settled_at=None)
    assert one.transition is None and one.first_run_after is one.last_run_before_settling
    late = summarize_tests([run("r1", 40, PASSING, LINK_LATE)], edited_files=set(), settled_at=30)
    assert late.first_run_after and late.first_run_after.run_id == "r1"
    assert late.last_run_before_settling is None and late.transition is None
    none = summarize_tests([], edited_files=set(), settled_at=None)
    assert none.as_json(str) == {
        "runs": 0,
        "first_run_after": None,
        "last_run_before_settling": None,
        "transition": None,
        "failing_tests_in_edited_files": [],
        "tests_edited_by_agent": False,
    }


def test_failing_tests_in_edited_files_and_tests_edited_by_agent() -> None:
    failing = (
        FailingTest("tests/test_text.py::test_upper", "tests/test_text.py"),
        FailingTest("tests/test_calc.py::test_add", "tests/test_calc.py"),
        FailingTest("com.example.FooTest.adds", None, "com.example.FooTest"),
        FailingTest("TestGo", None, None),
    )
    summary = summarize_tests(
        [run("r1", 10, FAILING, failing=failing), run("r2", 20, FAILING, failing=failing[:1])],
        edited_files={"tests/test_text.py", "src/test/java/com/example/FooTest.java", "calc.py"},
        settled_at=None,
    )
    assert summary.failing_tests_in_edited_files == [
        "tests/test_text.py::test_upper",
        "com.example.FooTest.adds",
    ]
    assert summary.tests_edited_by_agent
    as_json = summary.as_json(lambda t: f"t{t}")
    assert as_json["first_run_after"] == {"id": "r1", "status": FAILING, "started_at": "t10"}
    assert as_json["transition"] == "still_failing"
