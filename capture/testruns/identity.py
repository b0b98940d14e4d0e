"""Whether two reports of a test run are one execution, and what the one run then says.

An agent's shell tool (seen by its hooks) and the pytest plugin, the `capture run` wrapper or a
JUnit report may all see the same execution. The shell knows when the tool call ran and its exit
code; the other source knows the runner's own results. They are one execution when, in one
workspace, the other source's run lies inside the shell call's time window and the runners agree
(`same_runner`: names that mean one runner agree, and a name that does not say which runner, on
either side, agrees with any).

The shell's window: from its start (the post-tool-use report's time minus the duration the agent
reported, or the time of its pre-tool-use report) to its report. An agent that reports neither
leaves only the report's time: the other run must then have ended at most `END_GAP_S` before it
and started at most `LOOKBACK_S` before it. A run that began after the report is never the
call's, and of several that fit, the one that ended closest to the report is taken, so a later
run is never mistaken for an earlier call. Plain functions: the store gathers the rows, these
decide.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from capture.model import TestRunInput
from capture.testruns.commands import runner_of, simple_commands

__all__ = [
    "END_GAP_S",
    "LOOKBACK_S",
    "MERGED_SOURCES",
    "SHELL_SOURCE",
    "SLACK_S",
    "START_LAG_S",
    "RunTimes",
    "best_other",
    "best_shell",
    "merge_runs",
    "same_execution",
    "same_runner",
    "seen_by",
    "shell_runner",
    "wrapped_command",
]

#: The source of runs an agent hook saw through the shell tool.
SHELL_SOURCE = "hook"
#: Sources whose runs an agent's shell may also have seen.
MERGED_SOURCES = frozenset({"pytest-plugin", "wrapper", "junit-file"})

#: Two processes' clocks, a duration rounded to milliseconds, a report file's mtime.
SLACK_S = 1.0
#: The hook's report comes after the command ended by the time the agent takes to call the hook
#: and the hook's own start-up (more under load), so its time minus the duration falls that much
#: after the command began.
START_LAG_S = 3.0
#: Without the shell's duration: how soon after the run ended the shell must have reported.
END_GAP_S = 10.0
#: Without the shell's duration: how long before its report the run may have started.
LOOKBACK_S = 600.0


@dataclass(frozen=True, slots=True)
class RunTimes:
    """A recorded or arriving run, as far as identity goes."""

    run_id: str
    started_at: float
    duration_s: float | None
    runner: str | None

    @property
    def ended_at(self) -> float:
        return self.started_at + (self.duration_s or 0.0)


#: Runner names as shell commands (`capture.testruns.commands`), summaries and reports give
#: them, by the runner they mean. A name not here says no runner: a script (`npm test`,
#: `make test`, tox, nox), a report that does not tell (`junit`), the user's own patterns.
_RUNNERS = {
    "pytest": "pytest",
    "unittest": "unittest",
    "jest": "jest",
    "vitest": "vitest",
    "mocha": "mocha",
    "go test": "go",
    "go": "go",
    "cargo test": "cargo",
    "cargo": "cargo",
    "nextest": "cargo",
    "maven": "jvm",
    "gradle": "jvm",
    "surefire": "jvm",
    "dotnet test": "dotnet",
    "rspec": "rspec",
    "phpunit": "phpunit",
    "mix test": "exunit",
    "exunit": "exunit",
    "bun test": "bun",
    "bun": "bun",
    "deno test": "deno",
    "deno": "deno",
    "node --test": "node",
    "node": "node",
    "swift test": "swift",
    "swift": "swift",
    "xcodebuild test": "swift",
    "ctest": "ctest",
    "sbt": "sbt",
    "dart test": "dart",
    "flutter test": "dart",
    "dart": "dart",
    "zig test": "zig",
    "zig": "zig",
    "bazel test": "bazel",
    "bazel": "bazel",
}


def same_runner(a: str | None, b: str | None) -> bool:
    """Whether two runner names can be one runner: `go test` and a go-junit-report, `mvn test`
    and Surefire's reports agree; pytest and jest do not."""
    known_a, known_b = _RUNNERS.get(a or ""), _RUNNERS.get(b or "")
    return known_a is None or known_b is None or known_a == known_b


def same_execution(shell: RunTimes, other: RunTimes) -> bool:
    """Whether `other` (plugin, wrapper or JUnit run) is the execution the shell call ran."""
    if not same_runner(shell.runner, other.runner) or other.started_at > shell.ended_at:
        return False
    if shell.duration_s is not None:
        return (
            shell.started_at - START_LAG_S <= other.started_at
            and other.ended_at <= shell.ended_at + SLACK_S
        )
    reported = shell.started_at
    return (
        reported - LOOKBACK_S <= other.started_at
        and reported - END_GAP_S <= other.ended_at <= reported + SLACK_S
    )


def _gap(shell: RunTimes, other: RunTimes) -> tuple[float, str, str]:
    return (abs(shell.ended_at - other.ended_at), shell.run_id, other.run_id)


def best_other(shell: RunTimes, others: Sequence[RunTimes]) -> str | None:
    """The run among `others` the shell call ran, if any: the one that ended closest to it."""
    found = [o for o in others if same_execution(shell, o)]
    return min(found, key=lambda o: _gap(shell, o)).run_id if found else None


def best_shell(other: RunTimes, shells: Sequence[RunTimes]) -> str | None:
    """The shell call among `shells` that ran `other`, if any: the one that ended closest."""
    found = [s for s in shells if same_execution(s, other)]
    return min(found, key=lambda s: _gap(s, other)).run_id if found else None


def wrapped_command(line: str) -> str | None:
    """The command a `capture run [options] [--] CMD...` line runs, or None."""
    for command in simple_commands(line):
        try:
            tokens = shlex.split(command)
        except ValueError:
            tokens = command.split()
        for i in range(len(tokens) - 1):
            if tokens[i].rsplit("/", 1)[-1] == "capture" and tokens[i + 1] == "run":
                rest = tokens[i + 2 :]
                while rest and rest[0].startswith("-") and rest[0] != "--":
                    takes_value = "=" not in rest[0] and rest[0] in (
                        "--name",
                        "--junit",
                        "--workspace",
                    )
                    rest = rest[2:] if takes_value else rest[1:]
                if rest[:1] == ["--"]:
                    rest = rest[1:]
                return shlex.join(rest) if rest else None
    return None


def shell_runner(line: str, extra: Sequence[str] = ()) -> str | None:
    """The runner a shell line runs, also through `capture run`."""
    runner = runner_of(line, extra)
    if runner is None and (inner := wrapped_command(line)) is not None:
        runner = runner_of(inner, extra)
    return runner


def seen_by(first: str, first_at: float, then: str, then_at: float) -> str:
    """The comma-separated sources of a merged run in the order they reported: `first` (one
    source or a list already) at `first_at`, `then` at `then_at`. By report time, not by when
    a queued report was applied, so a late queue gives the same record."""
    sources = first.split(",")
    if then in sources:
        return first
    return ",".join([then, *sources] if then_at < first_at else [*sources, then])


def merge_runs(shell: TestRunInput, other: TestRunInput) -> TestRunInput:
    """One run from the shell's report and another source's: the other source's times, results
    and per-test outcomes (the shell's counts only when it has none); the shell's command line,
    so runs the agent typed compare with each other; the exit code the other source knew, else
    the shell's."""
    counted = other.passed is not None or other.failed is not None or other.cases
    results = other if counted else shell
    return replace(
        other,
        command=shell.command,
        name=other.name or shell.name,
        cwd=other.cwd or shell.cwd,
        exit_code=other.exit_code if other.exit_code is not None else shell.exit_code,
        passed=results.passed,
        failed=results.failed,
        errors=results.errors,
        skipped=results.skipped,
        failing_ids=list(results.failing_ids),
        results_from=results.results_from,
        cases=list(results.cases),
        dedupe_key=other.dedupe_key or shell.dedupe_key,
    )
