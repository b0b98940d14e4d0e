"""Which episodes a test run is evidence for, and what an episode's runs say about it.

Plain functions over plain data: the store gathers the times and counts, these decide. The
docs/test-runs.md states the same rules for users.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from capture.testruns.testfiles import is_test_path, lives_in

__all__ = [
    "FAILING",
    "INCOMPLETE",
    "LINK_LATE",
    "LINK_OPEN",
    "NO_TESTS",
    "PASSING",
    "EpisodeTimes",
    "FailingTest",
    "LinkedRun",
    "TestsSummary",
    "episodes_to_link",
    "run_status",
    "summarize_tests",
]

#: The episode was not settled when the run started.
LINK_OPEN = "open"
#: The workspace's most recently settled episode, its edits still within the late window.
LINK_LATE = "late"

PASSING = "passing"
FAILING = "failing"
#: Ended without a verdict: interrupted (Ctrl-C, killed), or the runner's own usage or
#: internal error.
INCOMPLETE = "incomplete"
#: Ran, but no test passed or failed (none collected, all skipped).
NO_TESTS = "no_tests"

# 128 + HUP, INT, KILL, TERM: how a shell reports a command those signals ended.
_SIGNAL_EXITS = frozenset({129, 130, 137, 143})
# pytest: 2 interrupted, 3 internal error, 4 usage error, 5 no tests collected.
_PYTEST_INCOMPLETE = frozenset({2, 3, 4})
_PYTEST_NO_TESTS = 5


@dataclass(frozen=True, slots=True)
class EpisodeTimes:
    """An episode of the run's workspace, seen from the run: the times of its proposals that
    were applied before the run started."""

    episode_id: str
    first_applied_at: float
    last_applied_at: float
    settled_at: float | None


def episodes_to_link(
    episodes: Sequence[EpisodeTimes], started_at: float, late_seconds: float
) -> list[tuple[str, str]]:
    """(episode id, link) pairs for a run that started at `started_at`: every episode with an
    edit applied before the run and not settled when it started (LINK_OPEN), plus the one
    settled last before the run if the run started within the late window of its last edit
    (LINK_LATE)."""
    links: list[tuple[str, str]] = []
    late: EpisodeTimes | None = None
    for e in sorted(episodes, key=lambda e: e.episode_id):
        if e.first_applied_at > started_at:
            continue
        if e.settled_at is None or e.settled_at > started_at:
            links.append((e.episode_id, LINK_OPEN))
        elif started_at <= e.last_applied_at + late_seconds and (
            late is None or (e.settled_at, e.episode_id) > (late.settled_at or 0.0, late.episode_id)
        ):
            late = e
    if late is not None:
        links.append((late.episode_id, LINK_LATE))
    return links


def run_status(
    *,
    exit_code: int | None,
    passed: int | None,
    failed: int | None,
    errors: int | None,
    skipped: int | None = None,
    runner: str | None = None,
) -> str:
    """PASSING, FAILING, INCOMPLETE or NO_TESTS.

    Any failed or erroring test makes a run failing, even an interrupted one. Otherwise a
    signal exit is incomplete; pytest's own exit codes are read as pytest documents them; a
    zero exit passes when a test passed (or no counts are known); any other exit fails."""
    del skipped  # skipped tests carry no verdict either way
    if (failed or 0) + (errors or 0) > 0:
        return FAILING
    if exit_code is not None and (exit_code < 0 or exit_code in _SIGNAL_EXITS):
        return INCOMPLETE
    if runner == "pytest" and exit_code in _PYTEST_INCOMPLETE:
        return INCOMPLETE
    if runner == "pytest" and exit_code == _PYTEST_NO_TESTS:
        return NO_TESTS
    counted = passed is not None
    if exit_code is None:
        return PASSING if counted and (passed or 0) > 0 else NO_TESTS
    if exit_code == 0:
        return NO_TESTS if counted and (passed or 0) == 0 else PASSING
    return FAILING


@dataclass(frozen=True, slots=True)
class FailingTest:
    test_id: str
    file: str | None = None
    classname: str | None = None


@dataclass(frozen=True, slots=True)
class LinkedRun:
    run_id: str
    started_at: float
    status: str
    link: str
    failing: tuple[FailingTest, ...] = ()


@dataclass(slots=True)
class TestsSummary:
    __test__ = False  # not a pytest test class, whatever its name

    runs: int = 0
    first_run_after: LinkedRun | None = None
    last_run_before_settling: LinkedRun | None = None
    transition: str | None = None
    failing_tests_in_edited_files: list[str] = field(default_factory=list)
    tests_edited_by_agent: bool = False

    def as_json(self, iso: Any) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "first_run_after": _brief(self.first_run_after, iso),
            "last_run_before_settling": _brief(self.last_run_before_settling, iso),
            "transition": self.transition,
            "failing_tests_in_edited_files": self.failing_tests_in_edited_files,
            "tests_edited_by_agent": self.tests_edited_by_agent,
        }


def _brief(run: LinkedRun | None, iso: Any) -> dict[str, Any] | None:
    if run is None:
        return None
    return {"id": run.run_id, "status": run.status, "started_at": iso(run.started_at)}


_VERDICTS = (PASSING, FAILING)


def summarize_tests(
    runs: Sequence[LinkedRun], *, edited_files: Collection[str], settled_at: float | None
) -> TestsSummary:
    """What an episode's linked runs say about it.

    - first_run_after: its first linked run with a verdict (passing or failing);
    - last_run_before_settling: its last such run that started before it settled (while it is
      open: the last so far); late-linked runs never count here;
    - transition between the two when they are different runs: failing_to_passing,
      passing_to_failing, still_passing, still_failing;
    - failing_tests_in_edited_files: tests that failed in any linked run and live in a file the
      episode's applied proposals edited;
    - tests_edited_by_agent: the episode's agent edited test files itself, which makes its runs
      weak evidence.
    """
    edited_tests = any(is_test_path(f) for f in edited_files)
    if not runs:
        # Many episodes have no linked run: nothing below would find anything.
        return TestsSummary(tests_edited_by_agent=edited_tests)
    ordered = sorted(runs, key=lambda r: (r.started_at, r.run_id))
    verdicts = [r for r in ordered if r.status in _VERDICTS]
    summary = TestsSummary(runs=len(ordered), tests_edited_by_agent=edited_tests)
    if verdicts:
        summary.first_run_after = verdicts[0]
    before = [
        r
        for r in verdicts
        if r.link == LINK_OPEN and (settled_at is None or r.started_at <= settled_at)
    ]
    if before:
        summary.last_run_before_settling = before[-1]
    first, last = summary.first_run_after, summary.last_run_before_settling
    if first is not None and last is not None and first.run_id != last.run_id:
        if first.status == last.status:
            summary.transition = f"still_{last.status}"
        else:
            summary.transition = f"{first.status}_to_{last.status}"
    seen: dict[str, None] = {}
    for run in ordered:
        for test in run.failing:
            if test.test_id not in seen and lives_in(test.file, test.classname, edited_files):
                seen[test.test_id] = None
    summary.failing_tests_in_edited_files = list(seen)
    return summary
