"""The local SQLite store: the rendezvous point of editor windows, hook commands and watchers.

Stdlib sqlite3 only (the hook path cannot afford heavier imports); the schema is kept by
`capture.store.schema`. Every write is a short `BEGIN IMMEDIATE` transaction: taking the write lock
up front means a busy writer waits (busy timeout) instead of failing on a lock upgrade.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capture.edits.windows import DEFAULT_LATE, Window
from capture.errors import NotFoundError, StoreError
from capture.model import CaseResult, Outcome, ProposalInput, State, TestRunInput
from capture.store.ids import new_id
from capture.store.schema import SCHEMA_VERSION, migrate, schema_version
from capture.testruns.linking import EpisodeTimes, episodes_to_link

if TYPE_CHECKING:
    from capture.edits.hunks import LocatedHunk

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CheckpointResult",
    "DeferredRollups",
    "DueCheckpoint",
    "Observed",
    "Settled",
    "Store",
]

BUSY_TIMEOUT_MS = 30_000


@dataclass(frozen=True, slots=True)
class DueCheckpoint:
    checkpoint_id: int
    proposal_id: str
    window: str
    due_at: float
    workspace_id: int
    root: str
    path: str
    is_final: bool


@dataclass(frozen=True, slots=True)
class CheckpointResult:
    """What one checkpoint observed; `final` marks the last window, where the outcome sticks."""

    checkpoint_id: int
    proposal_id: str
    window: str
    similarity: float | None
    retention: float | None
    outcome: Outcome
    reason: str
    final: bool


@dataclass(frozen=True, slots=True)
class Observed:
    """What the checkpoints of a window observed."""

    similarity: float | None
    retention: float | None
    outcome: Outcome
    via: str


@dataclass(frozen=True, slots=True)
class Settled:
    """An applied proposal judged as it is recorded (a backfill): its outcome and what its
    windows and its late check observed, all at `at`. Recorded so at once, the rows are the
    ones scheduling the checkpoints and observing them one by one would leave."""

    at: float
    outcome: Outcome
    reason: str
    windows: Observed  # every window but the late check; also the proposal's measures
    late: Observed


@dataclass(frozen=True, slots=True)
class DeferredRollups:
    """Rollup triggers dropped for a bulk insert: their SQL, and the last proposal rowid and
    checkpoint id before it."""

    triggers: tuple[str, ...]
    proposals: int
    checkpoints: int


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class Store:
    """One connection to the capture database. Not shared between threads."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path) -> Store:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = _connect(path)
            wal = conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
            if not wal or schema_version(conn) < SCHEMA_VERSION:
                # Switching to WAL needs the database to itself, and several processes (or a
                # server's threads) may open a new store at once: both happen under the
                # migration lock, where a second opener waits its turn.
                migrate(path)
            elif schema_version(conn) > SCHEMA_VERSION:
                raise StoreError(
                    f"{path} was written by a newer agent-capture (schema "
                    f"{schema_version(conn)} > {SCHEMA_VERSION}); upgrade agent-capture"
                )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot open {path}: {exc.strerror or exc}") from exc
        return cls(conn, path)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        if self.conn.in_transaction:
            yield self.conn
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    def defer_rollups(self) -> DeferredRollups:
        """Stop adding each inserted proposal and checkpoint to the report rollups, inside the
        open write transaction, until `catch_up_rollups` adds them all at once (before the
        commit: no other connection ever sees the triggers missing). For bulk inserts, where a
        trigger per row costs more than the row. Rows inserted meanwhile must not be updated or
        deleted before the catch-up: their update triggers would take out what is not in yet."""
        from capture.store.edit_rollups import INSERT_TRIGGERS

        assert self.conn.in_transaction, "defer_rollups needs an open write transaction"
        marks = ",".join("?" * len(INSERT_TRIGGERS))
        saved = tuple(
            row[0]
            for row in self.conn.execute(
                f"SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks})",
                INSERT_TRIGGERS,
            )
        )
        for name in INSERT_TRIGGERS:
            self.conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        proposals = self.conn.execute("SELECT coalesce(max(rowid), 0) FROM proposals")
        checkpoints = self.conn.execute("SELECT coalesce(max(id), 0) FROM checkpoints")
        return DeferredRollups(saved, proposals.fetchone()[0], checkpoints.fetchone()[0])

    def catch_up_rollups(self, deferred: DeferredRollups) -> None:
        """Add the rows inserted since `defer_rollups` to the rollups; restore the triggers."""
        from capture.store.edit_rollups import INSERT_TRIGGERS, catch_up_statements

        if len(deferred.triggers) == len(INSERT_TRIGGERS):
            marks = {"proposals": deferred.proposals, "checkpoints": deferred.checkpoints}
            for sql in catch_up_statements():
                self.conn.execute(sql, marks)
        for sql in deferred.triggers:
            self.conn.execute(sql)

    # -- raw log ---------------------------------------------------------------------------

    def append_event(
        self,
        kind: str,
        payload: Any,
        *,
        at: float,
        source: str | None = None,
        workspace: str | None = None,
    ) -> int:
        """Append one input as it was received. Strings are kept verbatim."""
        text = payload if isinstance(payload, str) or payload is None else json.dumps(payload)
        cur = self.conn.execute(
            "INSERT INTO events (at, kind, source, workspace, payload) VALUES (?, ?, ?, ?, ?)",
            (at, kind, source, workspace, text),
        )
        return int(cur.lastrowid or 0)

    def append_events(self, rows: Sequence[tuple[float, str, str | None, str | None, str]]) -> None:
        """Batched append: (at, kind, source, workspace, payload) rows in one transaction."""
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO events (at, kind, source, workspace, payload) VALUES (?, ?, ?, ?, ?)",
                rows,
            )

    def prune_events(self, before: float) -> int:
        with self.transaction():
            return self.conn.execute("DELETE FROM events WHERE at < ?", (before,)).rowcount

    # -- workspaces and episodes -----------------------------------------------------------

    def ensure_workspace(self, root: str, now: float) -> int:
        row = self.conn.execute("SELECT id FROM workspaces WHERE root = ?", (root,)).fetchone()
        if row:
            return int(row[0])
        self.conn.execute(
            "INSERT OR IGNORE INTO workspaces (root, created_at) VALUES (?, ?)", (root, now)
        )
        return int(
            self.conn.execute("SELECT id FROM workspaces WHERE root = ?", (root,)).fetchone()[0]
        )

    def ensure_episode(
        self,
        *,
        workspace_id: int,
        agent: str,
        now: float,
        gap: float,
        session_id: str | None = None,
        turn_id: str | None = None,
        model: str | None = None,
        prompt: str | None = None,
        source: str | None = None,
    ) -> str:
        """The episode for an agent turn: keyed by the agent's own ids when it has them, else the
        agent's latest open episode in this workspace if it was active within `gap` seconds."""
        key = f"{agent}\x1f{session_id}\x1f{turn_id}" if turn_id else None
        row = None
        if key:
            row = self.conn.execute("SELECT id FROM episodes WHERE key = ?", (key,)).fetchone()
        else:
            row = self.conn.execute(
                """SELECT id FROM episodes WHERE workspace_id = ? AND agent = ?
                   AND session_id IS ? AND ended_at IS NULL AND last_at >= ?
                   ORDER BY last_at DESC LIMIT 1""",
                (workspace_id, agent, session_id, now - gap),
            ).fetchone()
        if row:
            episode_id = str(row[0])
            self.conn.execute(
                """UPDATE episodes SET last_at = max(last_at, ?), model = coalesce(?, model),
                   prompt = coalesce(prompt, ?) WHERE id = ?""",
                (now, model, prompt, episode_id),
            )
            return episode_id
        episode_id = new_id(now)
        self.conn.execute(
            """INSERT INTO episodes (id, workspace_id, agent, model, session_id, turn_id, key,
               prompt, source, started_at, last_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                episode_id,
                workspace_id,
                agent,
                model,
                session_id,
                turn_id,
                key,
                prompt,
                source,
                now,
                now,
            ),
        )
        return episode_id

    def end_episode(self, episode_id: str, now: float) -> None:
        self.conn.execute(
            "UPDATE episodes SET ended_at = coalesce(ended_at, ?) WHERE id = ?", (now, episode_id)
        )

    # -- proposals -------------------------------------------------------------------------

    def add_proposal(
        self,
        proposal: ProposalInput,
        located: Sequence[LocatedHunk],
        *,
        relative_path: str,
        now: float,
        windows: Sequence[Window],
        late: Window,
        gap: float,
        settled: Settled | None = None,
        episode: tuple[int, str] | None = None,
    ) -> str:
        """Record a proposal with its hunks, its checkpoints and the file's baseline text.
        Returns the proposal id (the existing one when dedupe_key was seen before). An applied
        proposal `settled` already is recorded with its outcome and its checkpoints observed.
        `episode`: its (workspace id, episode id), when the caller has ensured them."""
        # Imported here: recording a test run (capture run, the pytest plugin) has no need of
        # the diff machinery and its start-up cost.
        from capture.edits.hunks import Change, count_change

        with self.transaction():
            if proposal.dedupe_key:
                row = self.conn.execute(
                    "SELECT id FROM proposals WHERE dedupe_key = ?", (proposal.dedupe_key,)
                ).fetchone()
                if row:
                    return str(row[0])
            if episode is not None:
                workspace_id, episode_id = episode
            else:
                workspace_id = self.ensure_workspace(proposal.workspace, now)
                episode_id = self.ensure_episode(
                    workspace_id=workspace_id,
                    agent=proposal.agent,
                    now=now,
                    gap=gap,
                    session_id=proposal.session_id,
                    turn_id=proposal.turn_id,
                    model=proposal.model,
                    prompt=proposal.prompt,
                    source=proposal.source,
                )
            change = Change(0, 0, 0, 0)
            for hunk in located:
                change = change + count_change(hunk.old_text, hunk.new_text)
            proposal_id = new_id(now)
            state = proposal.state
            outcome = Outcome.REJECTED if state is State.REJECTED else Outcome.PENDING
            applied_at = now if state is State.APPLIED else None
            settled_at = now if state is State.REJECTED else None
            if settled is not None and state is State.APPLIED:
                outcome, settled_at = settled.outcome, settled.at
            else:
                settled = None
            self.conn.execute(
                """INSERT INTO proposals (id, episode_id, workspace_id, path, agent, model, tool,
                   tool_use_id, dedupe_key, state, outcome, reason, similarity, retention,
                   chars_added, chars_removed, lines_added, lines_removed, created_file,
                   backfilled, source, created_at, applied_at, decided_at, decided_by,
                   settled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                   ?, ?, ?, ?, ?, ?, ?)""",
                (
                    proposal_id,
                    episode_id,
                    workspace_id,
                    relative_path,
                    proposal.agent,
                    proposal.model,
                    proposal.tool,
                    proposal.tool_use_id,
                    proposal.dedupe_key,
                    state.value,
                    outcome.value,
                    settled.reason if settled else None,
                    settled.windows.similarity if settled else None,
                    settled.windows.retention if settled else None,
                    change.chars_added,
                    change.chars_removed,
                    change.lines_added,
                    change.lines_removed,
                    int(proposal.created_file),
                    int(proposal.backfilled),
                    proposal.source,
                    now,
                    applied_at,
                    now if state is State.REJECTED else None,
                    proposal.decided_by,
                    settled_at,
                ),
            )
            self._insert_hunks(proposal_id, located)
            if state is State.APPLIED:
                self._schedule(proposal_id, now, windows, late, settled)
                if proposal.file_text is not None:
                    self.set_baseline(workspace_id, relative_path, proposal.file_text, now)
            if state is State.REJECTED:
                self._settle_episode_if_done(episode_id, now)
            return proposal_id

    def _insert_hunks(self, proposal_id: str, located: Sequence[LocatedHunk]) -> None:
        self.conn.executemany(
            """INSERT INTO hunks (proposal_id, idx, old_text, new_text, region_start, region_end,
               context_before, context_after, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                (
                    proposal_id,
                    i,
                    h.old_text,
                    h.new_text,
                    h.span[0] if h.span else None,
                    h.span[1] if h.span else None,
                    h.context_before,
                    h.context_after,
                    "tracking" if h.span else "lost",
                )
                for i, h in enumerate(located)
            ],
        )

    def _schedule(
        self,
        proposal_id: str,
        applied_at: float,
        windows: Sequence[Window],
        late: Window,
        settled: Settled | None = None,
    ) -> None:
        if settled is None:
            self.conn.executemany(
                """INSERT OR IGNORE INTO checkpoints (proposal_id, window, window_seconds,
                   due_at) VALUES (?, ?, ?, ?)""",
                [
                    (proposal_id, w.label, w.seconds, applied_at + w.seconds)
                    for w in (*windows, late)
                ],
            )
            return
        rows = []
        for window in (*windows, late):
            seen = settled.late if window.label == late.label else settled.windows
            rows.append(
                (
                    proposal_id,
                    window.label,
                    window.seconds,
                    applied_at + window.seconds,
                    settled.at,
                    seen.similarity,
                    seen.retention,
                    seen.outcome.value,
                    seen.via,
                )
            )
        self.conn.executemany(
            """INSERT OR IGNORE INTO checkpoints (proposal_id, window, window_seconds, due_at,
               observed_at, similarity, retention, outcome, via)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            rows,
        )

    def decide_proposal(
        self,
        proposal_id: str,
        *,
        accepted: bool,
        decided_by: str | None,
        now: float,
        located: Sequence[LocatedHunk] | None = None,
        file_text: str | None = None,
        windows: Sequence[Window] = (),
        late: Window | None = None,
    ) -> None:
        """Accept (apply) or reject a shown proposal."""
        with self.transaction():
            row = self.proposal_row(proposal_id)
            if row["state"] != State.SHOWN.value:
                return
            if not accepted:
                self.conn.execute(
                    """UPDATE proposals SET state = 'rejected', outcome = 'rejected',
                       decided_at = ?, decided_by = ?, settled_at = ? WHERE id = ?""",
                    (now, decided_by, now, proposal_id),
                )
                self._settle_episode_if_done(row["episode_id"], now)
                return
            self.conn.execute(
                """UPDATE proposals SET state = 'applied', applied_at = ?, decided_at = ?,
                   decided_by = ? WHERE id = ?""",
                (now, now, decided_by, proposal_id),
            )
            if located is not None:
                self.conn.execute("DELETE FROM hunks WHERE proposal_id = ?", (proposal_id,))
                self._insert_hunks(proposal_id, located)
            if late is not None:
                self._schedule(proposal_id, now, windows, late)
            if file_text is not None:
                self.set_baseline(row["workspace_id"], row["path"], file_text, now)

    def proposal_row(self, proposal_id: str) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no proposal {proposal_id}")
        return row

    def hunk_rows(self, proposal_id: str) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT * FROM hunks WHERE proposal_id = ? ORDER BY idx", (proposal_id,)
        ).fetchall()

    def hunk_rows_of(self, proposal_ids: Sequence[str]) -> dict[str, list[sqlite3.Row]]:
        found: dict[str, list[sqlite3.Row]] = {pid: [] for pid in proposal_ids}
        for i in range(0, len(proposal_ids), 500):
            chunk = proposal_ids[i : i + 500]
            for row in self.conn.execute(
                f"SELECT * FROM hunks WHERE proposal_id IN ({','.join('?' * len(chunk))}) "
                "ORDER BY proposal_id, idx",
                chunk,
            ):
                found[row["proposal_id"]].append(row)
        return found

    def live_proposals(self, workspace_id: int, path: str) -> list[sqlite3.Row]:
        """Applied proposals of a file whose tracking is not over (late check included)."""
        return self.conn.execute(
            """SELECT p.* FROM proposals p WHERE p.workspace_id = ? AND p.path = ?
               AND p.state = 'applied' AND EXISTS (SELECT 1 FROM checkpoints c
               WHERE c.proposal_id = p.id AND c.observed_at IS NULL) ORDER BY p.id""",
            (workspace_id, path),
        ).fetchall()

    # -- baselines -------------------------------------------------------------------------

    def baseline(self, workspace_id: int, path: str) -> str | None:
        row = self.conn.execute(
            "SELECT text FROM tracked_files WHERE workspace_id = ? AND path = ?",
            (workspace_id, path),
        ).fetchone()
        return None if row is None else row[0]

    def set_baseline(self, workspace_id: int, path: str, text: str | None, now: float) -> None:
        self.conn.execute(
            """INSERT INTO tracked_files (workspace_id, path, text, observed_at) VALUES (?, ?, ?, ?)
               ON CONFLICT (workspace_id, path) DO UPDATE SET text = excluded.text,
               observed_at = excluded.observed_at""",
            (workspace_id, path, text, now),
        )

    def update_regions(self, spans: dict[int, tuple[int, int] | None]) -> None:
        """New (start, end) per hunk id; None marks the region lost."""
        self.conn.executemany(
            """UPDATE hunks SET region_start = ?, region_end = ?,
               status = CASE WHEN ? IS NULL THEN 'lost' ELSE 'tracking' END WHERE id = ?""",
            [
                (s[0] if s else None, s[1] if s else None, s[0] if s else None, hunk_id)
                for hunk_id, s in spans.items()
            ],
        )

    # -- checkpoints -----------------------------------------------------------------------

    def due_checkpoints(
        self, now: float, *, workspace_root: str | None = None, paths: Sequence[str] = ()
    ) -> list[DueCheckpoint]:
        sql = """SELECT c.id, c.proposal_id, c.window, c.due_at, p.workspace_id, w.root, p.path,
                 c.window_seconds = (SELECT max(c2.window_seconds) FROM checkpoints c2
                    WHERE c2.proposal_id = c.proposal_id AND c2.window != 'late') AS is_final
                 FROM checkpoints c JOIN proposals p ON p.id = c.proposal_id
                 JOIN workspaces w ON w.id = p.workspace_id
                 WHERE c.observed_at IS NULL AND c.due_at <= ?"""
        params: list[Any] = [now]
        if workspace_root is not None:
            sql += " AND w.root = ?"
            params.append(workspace_root)
        if paths:
            sql += f" AND p.path IN ({','.join('?' * len(paths))})"
            params.extend(paths)
        sql += " ORDER BY c.due_at"
        return [
            DueCheckpoint(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]) and r[2] != "late")
            for r in self.conn.execute(sql, params)
        ]

    def next_due_at(self) -> float | None:
        row = self.conn.execute(
            "SELECT min(due_at) FROM checkpoints WHERE observed_at IS NULL"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def record_checkpoint(
        self,
        checkpoint_id: int,
        *,
        observed_at: float,
        similarity: float | None,
        retention: float | None,
        outcome: Outcome,
        via: str,
    ) -> None:
        self.conn.execute(
            """UPDATE checkpoints SET observed_at = ?, similarity = ?, retention = ?, outcome = ?,
               via = ? WHERE id = ? AND observed_at IS NULL""",
            (observed_at, similarity, retention, outcome.value, via, checkpoint_id),
        )

    def record_checkpoints(
        self, results: Sequence[CheckpointResult], *, observed_at: float, via: str
    ) -> None:
        """Record observed checkpoints; a proposal shows `pending` with the provisional reason
        until its final window, then its outcome is settled (and its episode, when complete)."""
        if not results:
            return
        with self.transaction():
            self.conn.executemany(
                """UPDATE checkpoints SET observed_at = ?, similarity = ?, retention = ?,
                   outcome = ?, via = ? WHERE id = ? AND observed_at IS NULL""",
                [
                    (observed_at, r.similarity, r.retention, r.outcome.value, via, r.checkpoint_id)
                    for r in results
                ],
            )
            windows = [r for r in results if r.window != "late"]
            self.conn.executemany(
                """UPDATE proposals SET outcome = ?, reason = ?, similarity = ?, retention = ?,
                   settled_at = ? WHERE id = ? AND settled_at IS NULL""",
                [
                    (
                        r.outcome.value if r.final else Outcome.PENDING.value,
                        r.reason if r.final else f"at {r.window}: {r.outcome.value}",
                        r.similarity,
                        r.retention,
                        observed_at if r.final else None,
                        r.proposal_id,
                    )
                    for r in windows
                ],
            )
            finals = [r.proposal_id for r in windows if r.final]
            for i in range(0, len(finals), 500):
                chunk = finals[i : i + 500]
                episodes = self.conn.execute(
                    f"SELECT DISTINCT episode_id FROM proposals WHERE id IN "
                    f"({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for (episode_id,) in episodes:
                    self._settle_episode_if_done(episode_id, observed_at)

    def set_outcome(
        self,
        proposal_id: str,
        *,
        outcome: Outcome,
        reason: str,
        similarity: float | None,
        retention: float | None,
        settled_at: float | None,
    ) -> None:
        self.conn.execute(
            """UPDATE proposals SET outcome = ?, reason = ?, similarity = ?, retention = ?,
               settled_at = ? WHERE id = ?""",
            (outcome.value, reason, similarity, retention, settled_at, proposal_id),
        )
        if settled_at is not None:
            episode_id = self.conn.execute(
                "SELECT episode_id FROM proposals WHERE id = ?", (proposal_id,)
            ).fetchone()[0]
            self._settle_episode_if_done(episode_id, settled_at)

    def _settle_episode_if_done(self, episode_id: str, now: float) -> None:
        self.conn.execute(
            """UPDATE episodes SET settled_at = ? WHERE id = ? AND settled_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM proposals WHERE episode_id = ?
               AND settled_at IS NULL)""",
            (now, episode_id, episode_id),
        )

    # -- test runs -------------------------------------------------------------------------

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

    # -- reading ---------------------------------------------------------------------------

    def resolve_episode_id(self, prefix: str) -> str:
        rows = self.conn.execute(
            "SELECT id FROM episodes WHERE id LIKE ? ORDER BY id LIMIT 2",
            (prefix.replace("%", "").replace("_", "") + "%",),
        ).fetchall()
        if not rows:
            row = self.conn.execute(
                "SELECT episode_id FROM proposals WHERE id = ?", (prefix,)
            ).fetchone()
            if row:
                return str(row[0])
            raise NotFoundError(f"no episode or proposal with id {prefix!r}")
        if len(rows) > 1:
            raise NotFoundError(f"id prefix {prefix!r} is ambiguous; give more digits")
        return str(rows[0][0])
