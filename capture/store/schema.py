"""The core's schema, created and upgraded by numbered migrations.

sqlite-utils is imported only when a migration is pending: the hook path opens the store on every
agent tool call and must not pay for that import. `PRAGMA user_version` mirrors the number of
applied migrations, so "is the schema current?" is one cheap read.

Tables another package owns are created by the migrations it registers with the store (see
`capture.store.migration_sets`), not here. `MOVED_MIGRATIONS` names the ones released in this
set before they had an owner: databases that applied them recorded them under this set, and
they keep their place in the numbering of `PRAGMA user_version`.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capture.connection import connect, sqlite3

__all__ = ["MIGRATION_SET", "MOVED_MIGRATIONS", "SCHEMA_VERSION", "migrate", "schema_version"]

MIGRATION_SET = "capture"

#: Released migrations of this set that now belong to another package's set: name -> owner.
#: Their statements live with their owner, who recognises them as applied when recorded here.
MOVED_MIGRATIONS: dict[str, str] = {"m005_sync": "sync", "m013_sync_opt_out": "sync"}


def _decision_statements() -> list[str]:
    from capture.store.decision_rows import DECISION_STATEMENTS
    from capture.store.followup_rows import FOLLOWUP_STATEMENTS

    return [*DECISION_STATEMENTS, *FOLLOWUP_STATEMENTS]


def _report_statements() -> list[str]:
    # Imported when the migration runs only: every hook call imports this module.
    from capture.store.proposal_rollups import rollup_statements
    from capture.store.run_rollups import run_rollup_statements

    return [*rollup_statements(), *run_rollup_statements()]


# Each entry: (name, list of SQL statements, or a function returning them when the migration
# runs). Append only: never edit a released migration.
_MIGRATIONS: list[tuple[str, list[str] | Callable[[], list[str]]]] = [
    (
        "m001_initial",
        [
            """CREATE TABLE workspaces (
                id INTEGER PRIMARY KEY,
                root TEXT NOT NULL UNIQUE,
                created_at REAL NOT NULL
            )""",
            """CREATE TABLE episodes (
                id TEXT PRIMARY KEY,
                workspace_id INTEGER REFERENCES workspaces(id),
                agent TEXT NOT NULL,
                model TEXT,
                session_id TEXT,
                turn_id TEXT,
                key TEXT UNIQUE,
                prompt TEXT,
                source TEXT,
                started_at REAL NOT NULL,
                last_at REAL NOT NULL,
                ended_at REAL,
                settled_at REAL
            )""",
            "CREATE INDEX episodes_workspace_last ON episodes(workspace_id, agent, last_at)",
            "CREATE INDEX episodes_started ON episodes(started_at)",
            """CREATE TABLE proposals (
                id TEXT PRIMARY KEY,
                episode_id TEXT NOT NULL REFERENCES episodes(id),
                workspace_id INTEGER REFERENCES workspaces(id),
                path TEXT NOT NULL,
                agent TEXT NOT NULL,
                model TEXT,
                tool TEXT,
                tool_use_id TEXT,
                dedupe_key TEXT UNIQUE,
                state TEXT NOT NULL CHECK (state IN ('shown', 'applied', 'rejected')),
                outcome TEXT NOT NULL DEFAULT 'pending',
                reason TEXT,
                similarity REAL,
                retention REAL,
                chars_added INTEGER NOT NULL DEFAULT 0,
                chars_removed INTEGER NOT NULL DEFAULT 0,
                lines_added INTEGER NOT NULL DEFAULT 0,
                lines_removed INTEGER NOT NULL DEFAULT 0,
                created_file INTEGER NOT NULL DEFAULT 0,
                backfilled INTEGER NOT NULL DEFAULT 0,
                source TEXT,
                created_at REAL NOT NULL,
                applied_at REAL,
                decided_at REAL,
                decided_by TEXT,
                settled_at REAL
            )""",
            "CREATE INDEX proposals_episode ON proposals(episode_id)",
            "CREATE INDEX proposals_workspace_outcome ON proposals(workspace_id, outcome)",
            "CREATE INDEX proposals_workspace_path ON proposals(workspace_id, path, state)",
            "CREATE INDEX proposals_created ON proposals(created_at)",
            """CREATE TABLE hunks (
                id INTEGER PRIMARY KEY,
                proposal_id TEXT NOT NULL REFERENCES proposals(id),
                idx INTEGER NOT NULL,
                old_text TEXT NOT NULL,
                new_text TEXT NOT NULL,
                region_start INTEGER,
                region_end INTEGER,
                context_before TEXT NOT NULL DEFAULT '',
                context_after TEXT NOT NULL DEFAULT '',
                status TEXT NOT NULL DEFAULT 'tracking',
                UNIQUE (proposal_id, idx)
            )""",
            """CREATE TABLE checkpoints (
                id INTEGER PRIMARY KEY,
                proposal_id TEXT NOT NULL REFERENCES proposals(id),
                window TEXT NOT NULL,
                window_seconds REAL NOT NULL,
                due_at REAL NOT NULL,
                observed_at REAL,
                similarity REAL,
                retention REAL,
                outcome TEXT,
                via TEXT,
                UNIQUE (proposal_id, window)
            )""",
            "CREATE INDEX checkpoints_due ON checkpoints(due_at) WHERE observed_at IS NULL",
            """CREATE TABLE tracked_files (
                workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
                path TEXT NOT NULL,
                text TEXT,
                observed_at REAL NOT NULL,
                PRIMARY KEY (workspace_id, path)
            )""",
            """CREATE TABLE test_runs (
                id TEXT PRIMARY KEY,
                workspace_id INTEGER REFERENCES workspaces(id),
                command TEXT NOT NULL,
                name TEXT,
                cwd TEXT,
                source TEXT NOT NULL,
                started_at REAL NOT NULL,
                duration_s REAL,
                exit_code INTEGER,
                passed INTEGER,
                failed INTEGER,
                errors INTEGER,
                skipped INTEGER,
                failing_ids TEXT,
                dedupe_key TEXT UNIQUE
            )""",
            "CREATE INDEX test_runs_workspace_started ON test_runs(workspace_id, started_at)",
            """CREATE TABLE episode_test_runs (
                episode_id TEXT NOT NULL REFERENCES episodes(id),
                test_run_id TEXT NOT NULL REFERENCES test_runs(id),
                PRIMARY KEY (episode_id, test_run_id)
            )""",
            "CREATE INDEX episode_test_runs_run ON episode_test_runs(test_run_id)",
            """CREATE TABLE events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                at REAL NOT NULL,
                kind TEXT NOT NULL,
                source TEXT,
                workspace TEXT,
                payload TEXT
            )""",
            "CREATE INDEX events_at ON events(at)",
        ],
    ),
    (
        "m002_test_runs",
        [
            # where the counts came from (runner, plugin/junit/summary, the JUnit file)
            "ALTER TABLE test_runs ADD COLUMN runner TEXT",
            "ALTER TABLE test_runs ADD COLUMN results_from TEXT",
            "ALTER TABLE test_runs ADD COLUMN report TEXT",
            # open: the episode was not settled when the run started; late: see
            # capture.testruns.linking
            "ALTER TABLE episode_test_runs ADD COLUMN link TEXT NOT NULL DEFAULT 'open'",
            """CREATE TABLE test_results (
                test_run_id TEXT NOT NULL REFERENCES test_runs(id),
                idx INTEGER NOT NULL,
                test_id TEXT NOT NULL,
                outcome TEXT NOT NULL
                    CHECK (outcome IN ('passed', 'failed', 'error', 'skipped')),
                file TEXT,
                classname TEXT,
                duration_s REAL,
                PRIMARY KEY (test_run_id, idx)
            ) WITHOUT ROWID""",
            """CREATE INDEX test_results_failing ON test_results(test_run_id)
                WHERE outcome IN ('failed', 'error')""",
        ],
    ),
    (
        "m003_hooks",
        [
            # Hook payloads queued as received by the fast lane, applied in order by a
            # detached child or the next reader (see capture.hooks.inbox).
            """CREATE TABLE hook_inbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                at REAL NOT NULL,
                agent TEXT NOT NULL,
                event TEXT,
                payload BLOB NOT NULL,
                cwd TEXT,
                env TEXT
            )""",
            # An agent's edit announced by a pre-tool-use hook, waiting for its post-tool-use:
            # if none comes before the turn ends, the edit was denied and is recorded rejected.
            """CREATE TABLE hook_pending (
                key TEXT PRIMARY KEY,
                agent TEXT NOT NULL,
                session_id TEXT,
                turn_id TEXT,
                workspace_id INTEGER REFERENCES workspaces(id),
                path TEXT NOT NULL,
                proposal TEXT NOT NULL,
                created_at REAL NOT NULL
            )""",
            "CREATE INDEX hook_pending_session ON hook_pending(agent, session_id)",
            # What a session-start hook told about a session (Claude Code names the model only
            # there), for the episodes of its later turns.
            """CREATE TABLE hook_sessions (
                agent TEXT NOT NULL,
                session_id TEXT NOT NULL,
                model TEXT,
                source TEXT,
                started_at REAL NOT NULL,
                PRIMARY KEY (agent, session_id)
            )""",
            # Transcripts and histories already imported, so a second import skips them.
            """CREATE TABLE imported_files (
                importer TEXT NOT NULL,
                path TEXT NOT NULL,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                imported_at REAL NOT NULL,
                proposals INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (importer, path)
            )""",
        ],
    ),
    # Rollups for `capture report` (kept by triggers) and the indexes its raw queries use.
    ("m006_report", _report_statements),
    (
        # Outcomes that can be trusted (rules version 2): which rules decided a label, each
        # checkpoint's own reason and how late it was read, the file as the hook saw it, and a
        # test run seen by several sources kept as one.
        "m007_outcomes",
        [
            "ALTER TABLE proposals ADD COLUMN rules_version INTEGER NOT NULL DEFAULT 1",
            "ALTER TABLE checkpoints ADD COLUMN reason TEXT",
            "ALTER TABLE checkpoints ADD COLUMN rules_version INTEGER",
            # seconds between the due time and the state the checkpoint measured, when the
            # history did not hold the state at the due time
            "ALTER TABLE checkpoints ADD COLUMN late_seconds REAL",
            # The bytes of each file an edit payload names, read by the fast lane when the hook
            # fired: the applier places the edit in them, not in the disk as it is later.
            """CREATE TABLE hook_snapshots (
                inbox_id INTEGER NOT NULL,
                path TEXT NOT NULL,
                content BLOB,
                size INTEGER,
                problem TEXT,
                PRIMARY KEY (inbox_id, path)
            ) WITHOUT ROWID""",
            # the agent's shell saw a run another source recorded: its exit code, kept beside
            "ALTER TABLE test_runs ADD COLUMN shell_exit_code INTEGER",
            # every source that saw this execution, comma-separated, in the order they came
            "ALTER TABLE test_runs ADD COLUMN seen_by TEXT",
        ],
    ),
    (
        # A queued payload whose applying failed is set aside with its error instead of
        # dropped, so the queue goes on and the payload can be applied again later.
        "m008_inbox_set_aside",
        [
            "ALTER TABLE hook_inbox ADD COLUMN set_aside_at REAL",
            "ALTER TABLE hook_inbox ADD COLUMN error TEXT",
            "ALTER TABLE hook_inbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
        ],
    ),
    (
        # Every tier decision for a proposal or an episode, kept: tiers are recomputed when late
        # signals arrive, and the history of changes (time, rules version, reasons) is data.
        "m009_tier_history",
        [
            """CREATE TABLE tier_history (
                id INTEGER PRIMARY KEY,
                subject TEXT NOT NULL CHECK (subject IN ('proposal', 'episode')),
                subject_id TEXT NOT NULL,
                tier TEXT NOT NULL,
                reasons TEXT NOT NULL,
                rules_version INTEGER NOT NULL,
                decided_at REAL NOT NULL
            )""",
            "CREATE INDEX tier_history_subject ON tier_history(subject, subject_id, id)",
        ],
    ),
    (
        # What became of each proposal's lines after its windows, read from git (see
        # capture.tiers.late_signals): one row per proposal, replaced by each late pass.
        "m011_late_signals",
        [
            """CREATE TABLE late_signals (
                proposal_id TEXT PRIMARY KEY REFERENCES proposals(id),
                measured_at REAL NOT NULL,
                lines INTEGER NOT NULL,
                committed INTEGER NOT NULL DEFAULT 0,
                commit_sha TEXT,
                committed_at REAL,
                path_at_commit TEXT,
                churn_14d REAL,
                churn_30d REAL,
                days_observed REAL,
                reverted_by TEXT,
                reverted_at REAL,
                revert_kind TEXT,
                fixed_by TEXT,
                fixed_at REAL,
                syntax_errors_added INTEGER,
                markers_added INTEGER NOT NULL DEFAULT 0,
                file_gone INTEGER NOT NULL DEFAULT 0,
                renamed INTEGER NOT NULL DEFAULT 0
            )""",
        ],
    ),
    (
        # Explicit decisions from the agents' telemetry (capture.store.decision_rows), linked
        # to their proposals by the agent's call id; how the prompt after an episode read
        # (capture.store.followup_rows).
        "m014_decisions_followups",
        _decision_statements,
    ),
    (
        # What the agent saw (see capture.store.trajectory_rows): its steps in order, the texts
        # they carry stored once by hash, the file before each edit, each episode's task.
        "m015_trajectory",
        [
            """CREATE TABLE IF NOT EXISTS texts (
                hash TEXT PRIMARY KEY,
                size INTEGER NOT NULL,
                codec TEXT NOT NULL,
                body BLOB NOT NULL,
                first_at REAL NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS steps (
                id INTEGER PRIMARY KEY,
                key TEXT NOT NULL UNIQUE,
                at REAL NOT NULL,
                kind TEXT NOT NULL,
                text_hash TEXT,
                tool TEXT,
                call_id TEXT,
                input_hash TEXT,
                is_error INTEGER NOT NULL DEFAULT 0,
                harness TEXT,
                parent TEXT,
                spawned TEXT,
                path TEXT,
                done_at REAL,
                truncated INTEGER NOT NULL DEFAULT 0,
                episode_id TEXT,
                session_id TEXT,
                source TEXT NOT NULL
            )""",
            "CREATE INDEX IF NOT EXISTS steps_episode ON steps(episode_id, at, id)",
            "CREATE INDEX IF NOT EXISTS steps_session ON steps(session_id, at, id)",
            "CREATE INDEX IF NOT EXISTS steps_at ON steps(at)",
            """CREATE TABLE IF NOT EXISTS proposal_before (
                proposal_id TEXT PRIMARY KEY,
                text_hash TEXT NOT NULL,
                via TEXT NOT NULL
            )""",
            "ALTER TABLE episodes ADD COLUMN task TEXT",
            "ALTER TABLE episodes ADD COLUMN task_source TEXT",
        ],
    ),
    (
        # Evidence, not guesses (capture.edits.evidence): a tool call that failed is `failed`,
        # not `rejected`, so the state's CHECK admits it (widened in place, as SQLite documents
        # for relaxing a constraint: every row already holds; RESET makes this connection read
        # the new text back before anything alters the table, and the ALTERs after it bump the
        # schema cookie so every other connection reads it too); who made the change
        # a label judges; what the label rests on, when its writer knew better than the rows.
        "m016_evidence",
        [
            "PRAGMA writable_schema = ON",
            """UPDATE sqlite_master SET sql = replace(sql,
                   'CHECK (state IN (''shown'', ''applied'', ''rejected''))',
                   'CHECK (state IN (''shown'', ''applied'', ''rejected'', ''failed''))')
               WHERE type = 'table' AND name = 'proposals'""",
            "PRAGMA writable_schema = RESET",
            "ALTER TABLE proposals ADD COLUMN author TEXT",
            "ALTER TABLE proposals ADD COLUMN evidence TEXT",
        ],
    ),
    (
        # One owner per document (capture.store.lease_rows): the process holding a file's
        # unsaved buffer owns its checkpoints; every other observer defers to it.
        "m017_document_leases",
        [
            """CREATE TABLE document_leases (
                workspace_id INTEGER NOT NULL,
                path TEXT NOT NULL,
                owner TEXT NOT NULL,
                renewed_at REAL NOT NULL,
                PRIMARY KEY (workspace_id, path)
            )""",
        ],
    ),
]

# The moved migrations keep counting: a database stamped by the numbering from before they
# moved (the core's and sync's together) is current exactly when it holds this number, and a
# number past it still means a newer release.
SCHEMA_VERSION = len(_MIGRATIONS) + len(MOVED_MIGRATIONS)


def _statements_migration(
    statements: list[str] | Callable[[], list[str]],
) -> Callable[[Any], None]:
    def apply(db: Any) -> None:
        for sql in statements() if callable(statements) else statements:
            db.execute(sql)

    return apply


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(db_path: Path) -> int:
    """Apply pending migrations; returns the schema version now in place.

    A lock file serialises migrations across processes: two hook commands starting on a fresh
    machine must not both try to create the tables.
    """
    import sqlite_utils
    from sqlite_utils.migrations import Migrations

    db_path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = db_path.with_name(db_path.name + ".migrate.lock")
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # Our connection, not one sqlite-utils opens with a library of its choosing.
        db = sqlite_utils.Database(connect(db_path, timeout=30.0))
        try:
            db.execute("PRAGMA journal_mode=WAL")
            migrations = Migrations(MIGRATION_SET)
            for name, statements in _MIGRATIONS:
                migrations(name=name)(_statements_migration(statements))
            migrations.apply(db)
            recorded = {m.name for m in migrations.applied(db)}
            applied = len(recorded - MOVED_MIGRATIONS.keys()) + len(MOVED_MIGRATIONS)
            db.execute(f"PRAGMA user_version={applied}")
            return applied
        finally:
            db.close()
