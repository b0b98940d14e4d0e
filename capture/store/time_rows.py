"""Rows whose stored time cannot be shown (before 1970, from 2200 on, or not a number): the
reading commands leave each such row out, alone, and `capture doctor` names it here."""

from __future__ import annotations

from typing import Any

from capture.connection import sqlite3
from capture.moments import EARLIEST_READABLE, LATEST_READABLE

__all__ = ["TIME_COLUMNS", "unreadable_times"]

#: The times the reading commands format, by table (its id column first).
TIME_COLUMNS: dict[str, tuple[str, ...]] = {
    "episodes": ("id", "started_at", "ended_at", "settled_at"),
    "proposals": ("id", "created_at", "applied_at", "settled_at"),
    "checkpoints": ("id", "due_at", "observed_at"),
    "test_runs": ("id", "started_at"),
    "tier_history": ("id", "decided_at"),
    "events": ("id", "at"),
}


def unreadable_times(conn: sqlite3.Connection, *, limit: int = 50) -> list[dict[str, Any]]:
    """Up to `limit` rows with a time outside what the reading commands show: table, id,
    column and the stored value (as text: it may be no number at all)."""
    found: list[dict[str, Any]] = []
    for table, (key, *columns) in TIME_COLUMNS.items():
        for column in columns:
            if len(found) >= limit:
                return found
            rows = conn.execute(
                f"""SELECT {key}, CAST({column} AS TEXT) FROM {table}
                    WHERE {column} IS NOT NULL AND NOT ({column} >= ? AND {column} < ?)
                    ORDER BY {key} LIMIT ?""",
                (EARLIEST_READABLE, LATEST_READABLE, limit - len(found)),
            ).fetchall()
            found.extend(
                {"table": table, "id": row[0], "column": column, "value": row[1]} for row in rows
            )
    return found
