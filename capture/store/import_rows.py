"""The files an import has read (`imported_files`): transcripts, rollouts and hook logs, by the
importer that read them, with their size and modification time then, so that a second import
skips the files unchanged since without reading them.
"""

from __future__ import annotations

from capture.connection import sqlite3

__all__ = ["imported_files", "mark_imported"]


def imported_files(conn: sqlite3.Connection, importer: str) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of each file the importer read, by path."""
    return {
        row[0]: (row[1], row[2])
        for row in conn.execute(
            "SELECT path, size, mtime_ns FROM imported_files WHERE importer = ?", (importer,)
        )
    }


def mark_imported(
    conn: sqlite3.Connection,
    importer: str,
    path: str,
    *,
    size: int,
    mtime_ns: int,
    now: float,
    proposals: int,
) -> None:
    """Note that the importer read the file as it is now (and how many proposals it gave)."""
    conn.execute(
        """INSERT INTO imported_files (importer, path, size, mtime_ns, imported_at,
           proposals) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (importer, path) DO UPDATE
           SET size = excluded.size, mtime_ns = excluded.mtime_ns,
           imported_at = excluded.imported_at, proposals = excluded.proposals""",
        (importer, path, size, mtime_ns, now, proposals),
    )
