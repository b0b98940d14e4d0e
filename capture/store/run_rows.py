"""`Store`'s rows of test runs: the run, its per-test results, and its links to the episodes it
is evidence for (decided by `capture.testruns.linking`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from capture.edits.windows import DEFAULT_LATE
from capture.model import CaseResult, TestRunInput
from capture.store.ids import new_id
from capture.store.row_groups import RowGroup
from capture.testruns.identity import (
    END_GAP_S,
    LOOKBACK_S,
    MERGED_SOURCES,
    SHELL_SOURCE,
    SLACK_S,
    START_LAG_S,
    RunTimes,
    best_other,
    best_shell,
    merge_runs,
    seen_by,
    shell_runner,
)
from capture.testruns.linking import EpisodeTimes, episodes_to_link

__all__ = ["RunRows"]


class RunRows(RowGroup):
    """Test runs, their results, and their links to episodes."""

    def add_test_run(
        self,
        run: TestRunInput,
        *,
        now: float,
        late_seconds: float = DEFAULT_LATE.seconds,
        link: bool = True,
    ) -> str:
        """Record a test run with its per-test results and link it to the episodes of its
        workspace it is evidence for (`capture.testruns.linking.episodes_to_link`). `link=False`
        leaves the linking to the caller (a backfill knows the run's episode)."""
        with self.transaction():
            if run.dedupe_key:
                row = self.conn.execute(
                    "SELECT id FROM test_runs WHERE dedupe_key = ?", (run.dedupe_key,)
                ).fetchone()
                if row:
                    return str(row[0])
            workspace_id = self.ensure_workspace(run.workspace, now) if run.workspace else None
            if workspace_id is not None:
                merged = self._merge_same_execution(run, workspace_id, now, late_seconds)
                if merged is not None:
                    return merged
            run_id = new_id(now)
            self.conn.execute(
                """INSERT INTO test_runs (id, workspace_id, command, name, cwd, source, started_at,
                   duration_s, exit_code, passed, failed, errors, skipped, failing_ids,
                   dedupe_key, runner, results_from, report)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    run_id,
                    workspace_id,
                    run.command,
                    run.name,
                    run.cwd,
                    run.source,
                    run.started_at,
                    run.duration_s,
                    run.exit_code,
                    run.passed,
                    run.failed,
                    run.errors,
                    run.skipped,
                    json.dumps(run.failing_ids),
                    run.dedupe_key,
                    run.runner,
                    run.results_from,
                    run.report,
                ),
            )
            self._insert_results(run_id, run.cases)
            if workspace_id is not None and link:
                self._link_test_run(run_id, workspace_id, run.started_at, late_seconds)
            return run_id

    def run_with_key(self, dedupe_key: str) -> tuple[str, int | None, str | None] | None:
        """(id, exit code, seen by) of the run recorded under this key, if one was."""
        row = self.conn.execute(
            "SELECT id, exit_code, seen_by FROM test_runs WHERE dedupe_key = ?", (dedupe_key,)
        ).fetchone()
        return None if row is None else (str(row[0]), row[1], row[2])

    def run_with_id(self, run_id: str) -> tuple[str, int | None, str | None] | None:
        """(id, exit code, seen by) of the run, if it is on record."""
        row = self.conn.execute(
            "SELECT id, exit_code, seen_by FROM test_runs WHERE id = ?", (run_id,)
        ).fetchone()
        return None if row is None else (str(row[0]), row[1], row[2])

    def known_run_keys(self, keys: Sequence[str]) -> set[str]:
        """The keys among `keys` a run was recorded under (a hook or an earlier import)."""
        return self._known_keys("test_runs", keys)

    def fill_exit_code(self, run_id: str, exit_code: int) -> None:
        """A later report of the run knows its exit code: kept where none was, and as the
        shell's own where another source's report made the run."""
        self.conn.execute(
            """UPDATE test_runs SET exit_code = coalesce(exit_code, ?),
               shell_exit_code = CASE WHEN seen_by IS NULL THEN shell_exit_code
               ELSE coalesce(shell_exit_code, ?) END WHERE id = ?""",
            (exit_code, exit_code, run_id),
        )

    def link_run(self, episode_id: str, run_id: str) -> None:
        """Link a run to an episode the caller knows it followed (a turn's own run)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO episode_test_runs (episode_id, test_run_id) VALUES (?, ?)",
            (episode_id, run_id),
        )

    def run_times_in(
        self, root: str, since: float, *, excluding: Sequence[str]
    ) -> list[tuple[float, float | None]]:
        """(start, duration) of the workspace's runs started since `since`, but those of the
        sources excluded."""
        marks = ",".join("?" * len(excluding))
        rows = self.conn.execute(
            f"""SELECT t.started_at, t.duration_s FROM test_runs t JOIN workspaces w
               ON w.id = t.workspace_id WHERE w.root = ? AND t.source NOT IN ({marks})
               AND t.started_at >= ?""",
            (root, *excluding, since),
        ).fetchall()
        return [(float(r[0]), r[1]) for r in rows]

    def _merge_same_execution(
        self, run: TestRunInput, workspace_id: int, now: float, late_seconds: float
    ) -> str | None:
        """When the agent's shell and another source both saw this execution and the other
        report is on record already, fold `run` into that run (`capture.testruns.identity`);
        returns its id, or None to record `run` as a run of its own."""
        if run.source == SHELL_SOURCE:
            shell = RunTimes("", run.started_at, run.duration_s, shell_runner(run.command))
            if run.duration_s is None:
                low, high = run.started_at - LOOKBACK_S, run.started_at + SLACK_S
            else:
                low, high = run.started_at - START_LAG_S, shell.ended_at + SLACK_S
            placeholders = ", ".join("?" for _ in MERGED_SOURCES)
            rows = self._runs(
                f"""source IN ({placeholders}) AND (seen_by IS NULL
                    OR ',' || seen_by || ',' NOT LIKE '%,{SHELL_SOURCE},%')""",
                (*sorted(MERGED_SOURCES),),
                workspace_id,
                low,
                high,
            )
            found = best_other(shell, [_times(r) for r in rows])
            if found is None:
                return None
            row = next(r for r in rows if r.run_id == found)
            merged = merge_runs(run, row.run)
            shell_exit = run.exit_code
            sources = seen_by(row.sources, row.reported_at, SHELL_SOURCE, now)
            cases = None  # the other source's results are on record already
        elif run.source in MERGED_SOURCES:
            runner = run.runner or shell_runner(run.command)
            other = RunTimes("", run.started_at, run.duration_s, runner)
            # a shell call may have begun long before the runner did (a build first)
            rows = self._runs(
                "source = ? AND seen_by IS NULL",
                (SHELL_SOURCE,),
                workspace_id,
                run.started_at - 24 * 3600.0,
                other.ended_at + END_GAP_S + SLACK_S,
            )
            found = best_shell(other, [_times(r) for r in rows])
            if found is None:
                return None
            row = next(r for r in rows if r.run_id == found)
            merged = merge_runs(row.run, run)
            shell_exit = row.run.exit_code
            sources = seen_by(row.sources, row.reported_at, run.source, now)
            cases = merged.cases
        else:
            return None
        self.conn.execute(
            """UPDATE test_runs SET command = ?, name = ?, cwd = ?, source = ?, started_at = ?,
               duration_s = ?, exit_code = ?, passed = ?, failed = ?, errors = ?, skipped = ?,
               failing_ids = ?, dedupe_key = ?, runner = ?, results_from = ?, report = ?,
               shell_exit_code = ?, seen_by = ? WHERE id = ?""",
            (
                merged.command,
                merged.name,
                merged.cwd,
                merged.source,
                merged.started_at,
                merged.duration_s,
                merged.exit_code,
                merged.passed,
                merged.failed,
                merged.errors,
                merged.skipped,
                json.dumps(merged.failing_ids),
                merged.dedupe_key,
                merged.runner,
                merged.results_from,
                merged.report,
                shell_exit,
                sources,
                found,
            ),
        )
        if cases:
            self.conn.execute("DELETE FROM test_results WHERE test_run_id = ?", (found,))
            self._insert_results(found, cases)
        # linked as either report alone would have been, at the merged start
        self._link_test_run(found, workspace_id, merged.started_at, late_seconds)
        return found

    def _runs(
        self, where: str, params: tuple[object, ...], workspace_id: int, low: float, high: float
    ) -> list[_RunRow]:
        rows = self.conn.execute(
            f"""SELECT id, command, name, cwd, source, started_at, duration_s, exit_code, passed,
                failed, errors, skipped, failing_ids, dedupe_key, runner, results_from, report,
                seen_by FROM test_runs WHERE workspace_id = ? AND started_at BETWEEN ? AND ?
                AND {where}""",
            (workspace_id, low, high, *params),
        ).fetchall()
        return [_RunRow(r) for r in rows]

    def _insert_results(self, run_id: str, cases: Sequence[CaseResult]) -> None:
        self.conn.executemany(
            """INSERT INTO test_results (test_run_id, idx, test_id, outcome, file, classname,
               duration_s) VALUES (?, ?, ?, ?, ?, ?, ?)""",
            [
                (run_id, i, c.test_id, c.outcome, c.file, c.classname, c.duration_s)
                for i, c in enumerate(cases)
            ],
        )

    def _link_test_run(
        self, run_id: str, workspace_id: int, started_at: float, late_seconds: float
    ) -> None:
        # Only episodes settled within the late window can still be linked: bound the scan.
        candidates = [
            EpisodeTimes(str(r[0]), float(r[1]), float(r[2]), r[3])
            for r in self.conn.execute(
                """SELECT e.id, min(p.applied_at), max(p.applied_at), e.settled_at
                   FROM episodes e JOIN proposals p ON p.episode_id = e.id
                   WHERE e.workspace_id = ? AND p.applied_at IS NOT NULL AND p.applied_at <= ?
                   AND (e.settled_at IS NULL OR e.settled_at >= ?) GROUP BY e.id""",
                (workspace_id, started_at, started_at - late_seconds),
            )
        ]
        links = episodes_to_link(candidates, started_at, late_seconds)
        self.conn.executemany(
            """INSERT OR IGNORE INTO episode_test_runs (episode_id, test_run_id, link)
               VALUES (?, ?, ?)""",
            [(episode_id, run_id, link) for episode_id, link in links],
        )


class _RunRow:
    """A test_runs row as a run input (without its per-test results, which stay in place)."""

    __slots__ = ("run_id", "run", "sources", "reported_at")

    def __init__(self, r: Sequence[object]) -> None:
        self.run_id = str(r[0])
        self.run = TestRunInput(
            command=str(r[1]),
            name=_text(r[2]),
            cwd=_text(r[3]),
            source=str(r[4]),
            started_at=float(r[5]),  # type: ignore[arg-type]
            duration_s=None if r[6] is None else float(r[6]),  # type: ignore[arg-type]
            exit_code=_int(r[7]),
            passed=_int(r[8]),
            failed=_int(r[9]),
            errors=_int(r[10]),
            skipped=_int(r[11]),
            failing_ids=json.loads(str(r[12])) if r[12] else [],
            dedupe_key=_text(r[13]),
            runner=_text(r[14]),
            results_from=_text(r[15]),
            report=_text(r[16]),
        )
        self.sources = _text(r[17]) or self.run.source
        # ids begin with the milliseconds of the report that created the row
        self.reported_at = int(self.run_id[:11], 16) / 1000


def _times(row: _RunRow) -> RunTimes:
    run = row.run
    return RunTimes(
        row.run_id, run.started_at, run.duration_s, run.runner or shell_runner(run.command)
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]
