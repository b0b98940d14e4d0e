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
