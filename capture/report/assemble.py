"""From a database to a `Report`: the queries of `capture.report.queries` folded by the pure
functions of `capture.report.figures`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from capture.connection import sqlite3
from capture.report.figures import (
    TOP_FILES_GROUP,
    TOP_FILES_TOTAL,
    Report,
    build_report,
)
from capture.report.languages import language_of
from capture.report.periods import day_label, week_label
from capture.report.queries import Scope, fetch_rows, workspace_roots
from capture.report.rows import Key

__all__ = ["key_label", "make_report"]

NO_MODEL = "(no model)"
NO_WORKSPACE = "(no workspace)"


def key_label(by: str | None, roots: dict[int, str]) -> Callable[[Key], str]:
    """How the keys SQL groups by read in the report."""
    if by == "model":
        return lambda k: str(k) or NO_MODEL
    if by == "language":
        return lambda k: language_of(str(k))
    if by == "workspace":
        return lambda k: roots.get(int(k), NO_WORKSPACE)
    if by == "day":
        return lambda k: day_label(int(k))
    if by == "week":
        return lambda k: week_label(int(k))
    return str


def make_report(
    conn: sqlite3.Connection,
    scope: Scope,
    by: str | None,
    *,
    workspace: str | None,
    light: bool = False,
) -> Report:
    """The report over `scope`, grouped by `by` (None: totals only). A `light` report has the
    proposal counts and retention only: no test figures, no most-undone files."""
    group_rows = None
    if by is not None:
        group_rows = fetch_rows(conn, scope, by, TOP_FILES_GROUP, light=light)
    reuse = None if group_rows is None else group_rows.episode_tests
    total_rows = fetch_rows(conn, scope, None, TOP_FILES_TOTAL, light=light, episode_tests=reuse)
    if group_rows is not None and total_rows.test_runs is None and not light:
        total_rows = replace(total_rows, test_runs=[])
    return build_report(
        since=scope.since,
        until=scope.until,
        by=by,
        workspace=workspace,
        total_rows=total_rows,
        group_rows=group_rows,
        label=key_label(by, workspace_roots(conn) if by == "workspace" else {}),
        utc_offset=scope.utc_offset,
    )
