"""Plain summaries of what a store holds, for a person to read: the database's state for
`capture doctor`, and what `capture demo` shows the server recorded.
"""

from __future__ import annotations

from typing import Any

from capture.connection import sqlite3
from capture.store.schema import SCHEMA_VERSION, schema_version

__all__ = ["COUNTED_TABLES", "database_state", "recorded_proposals", "recorded_runs"]

#: The tables `database_state` counts the rows of.
COUNTED_TABLES = ("episodes", "proposals", "checkpoints", "test_runs", "events")


def database_state(conn: sqlite3.Connection) -> dict[str, Any]:
    """Schema version (and the expected one), journal mode, a quick integrity check, the rows of
    the main tables and the checkpoints not observed yet."""
    return {
        "schema": schema_version(conn),
        "expected_schema": SCHEMA_VERSION,
        "journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
        "integrity": conn.execute("PRAGMA quick_check").fetchone()[0],
        "counts": {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COUNTED_TABLES
        },
        "pending_checkpoints": conn.execute(
            "SELECT count(*) FROM checkpoints WHERE observed_at IS NULL"
        ).fetchone()[0],
    }


def recorded_proposals(
    conn: sqlite3.Connection,
) -> tuple[list[str], list[tuple[dict[str, Any], dict[str, str | None]]]]:
    """The checkpoint windows seen (shortest first, the late check left out), and each
    proposal's row (by path) with the outcome each window observed."""
    windows = [
        str(r[0])
        for r in conn.execute(
            "SELECT DISTINCT window FROM checkpoints WHERE window != 'late' ORDER BY window_seconds"
        )
    ]
    proposals = []
    for p in conn.execute("SELECT * FROM proposals ORDER BY path").fetchall():
        seen = dict(
            conn.execute(
                "SELECT window, outcome FROM checkpoints WHERE proposal_id = ?", (p["id"],)
            ).fetchall()
        )
        proposals.append((dict(p), seen))
    return windows, proposals


def recorded_runs(conn: sqlite3.Connection) -> list[tuple[dict[str, Any], int]]:
    """Each test run's row, oldest first, with the number of episodes it is linked to."""
    runs = []
    for r in conn.execute("SELECT * FROM test_runs ORDER BY started_at").fetchall():
        linked = conn.execute(
            "SELECT count(*) FROM episode_test_runs WHERE test_run_id = ?", (r["id"],)
        ).fetchone()[0]
        runs.append((dict(r), int(linked)))
    return runs
