"""What a test run's results were, from the best source at hand: per-test results the pytest
plugin handed over, else JUnit reports the run wrote, else the runner's summary in its output.
Also the line format the plugin uses to hand its results to `capture run`. Pure functions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capture.model import CaseResult, TestRunInput

if TYPE_CHECKING:
    from capture.testruns.junit_xml import JunitReport
    from capture.testruns.summaries import RunCounts

__all__ = [
    "PluginSession",
    "Results",
    "choose_results",
    "decode_sessions",
    "encode_session",
    "fill_run",
]


@dataclass(slots=True)
class PluginSession:
    """One pytest session as the plugin saw it."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    exit_code: int | None = None
    cases: list[CaseResult] = field(default_factory=list)


def encode_session(session: PluginSession) -> str:
    """One JSON line; cases as [id, outcome, file, duration] lists to keep it small."""
    return json.dumps(
        {
            "passed": session.passed,
            "failed": session.failed,
            "errors": session.errors,
            "skipped": session.skipped,
            "exit_code": session.exit_code,
            "cases": [[c.test_id, c.outcome, c.file, c.duration_s] for c in session.cases],
        },
        separators=(",", ":"),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def decode_sessions(text: str) -> list[PluginSession]:
    """Sessions from the plugin's lines; lines that are not whole (a session killed while
    writing) are skipped."""
    sessions = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        cases = []
        for item in obj.get("cases") or []:
            if isinstance(item, list) and len(item) == 4 and isinstance(item[0], str):
                test_id, outcome, file, duration = item
                if outcome in ("passed", "failed", "error", "skipped"):
                    cases.append(
                        CaseResult(
                            test_id,
                            outcome,
                            file if isinstance(file, str) else None,
                            None,
                            float(duration) if isinstance(duration, int | float) else None,
                        )
                    )
        exit_code = obj.get("exit_code")
        sessions.append(
            PluginSession(
                passed=_int(obj.get("passed")),
                failed=_int(obj.get("failed")),
                errors=_int(obj.get("errors")),
                skipped=_int(obj.get("skipped")),
                exit_code=exit_code if isinstance(exit_code, int) else None,
                cases=cases,
            )
        )
    return sessions


@dataclass(slots=True)
class Results:
    """A count is None when no source gave it (no results at all, or a summary that does not
    say, as `go test` without `-v` about its passed tests); it is stored as NULL, never 0."""

    runner: str | None = None
    results_from: str | None = None  # plugin, junit, summary; None: only the exit code
    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    failing_ids: list[str] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    report: str | None = None


def choose_results(
    *,
    sessions: Sequence[PluginSession] = (),
    junit: JunitReport | None = None,
    report_paths: Sequence[str] = (),
    summary: RunCounts | None = None,
) -> Results:
    """The plugin's per-test results beat a JUnit report, which beats the printed summary
    (reports and the plugin know every test; a summary only counts and names failures)."""
    if sessions:
        cases = [c for s in sessions for c in s.cases]
        return Results(
            runner="pytest",
            results_from="plugin",
            passed=sum(s.passed for s in sessions),
            failed=sum(s.failed for s in sessions),
            errors=sum(s.errors for s in sessions),
            skipped=sum(s.skipped for s in sessions),
            failing_ids=[c.test_id for c in cases if c.outcome in ("failed", "error")],
            cases=cases,
        )
    if junit is not None:
        return Results(
            runner=junit.runner,
            results_from="junit",
            passed=junit.passed,
            failed=junit.failed,
            errors=junit.errors,
            skipped=junit.skipped,
            failing_ids=junit.failing_ids,
            cases=junit.cases,
            report=", ".join(report_paths) or None,
        )
    if summary is not None:
        return Results(
            runner=summary.runner,
            results_from="summary",
            passed=summary.passed,
            failed=summary.failed,
            errors=summary.errors,
            skipped=summary.skipped,
            failing_ids=list(summary.failing_ids),
        )
    return Results()


def fill_run(run: TestRunInput, results: Results) -> TestRunInput:
    run.runner = results.runner
    run.results_from = results.results_from
    run.passed, run.failed = results.passed, results.failed
    run.errors, run.skipped = results.errors, results.skipped
    run.failing_ids = results.failing_ids
    run.cases = results.cases
    run.report = results.report
    return run
