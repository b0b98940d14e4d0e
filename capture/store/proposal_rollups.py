"""Rollups of proposals and checkpoints by day and by quarter hour, kept current by triggers.

`capture report` must answer over a million proposals in about a second, and SQLite can only
group that many rows by sorting them (about 2 s per million here). So the database keeps, per
quarter hour, workspace and dimension value, the counts the report needs; triggers update them on
every insert, update and delete, whichever process writes. A report reads whole quarter hours
from the daily rollups, the partial days at its edges from the quarter-hour rollups and the
partial quarter hours from the raw rows, so its figures are exact.

Dimensions: `agent`, `model`, `ext` (the file's extension, mapped to a language by the report)
and `all` (value ''), which serves the totals and the grouping by workspace, day and week.
Each row covers one `span` (86400: a UTC day, 900: a quarter hour) numbered `bucket`
(= time // span). Quarter hours keep local days exact in every time zone (all UTC offsets are
multiples of 15 minutes); UTC days make long periods cheap.

The SQL below is part of migration m006_report, followed there by the test runs' rollups
(`capture.store.run_rollups`, which builds on SPANS here and is never imported by this module):
never change what these functions return; add a new migration instead
(tests/unit/capture/store/test_migrations.py pins what each released migration runs). A later
migration that
rebuilds proposals, checkpoints, episodes, test_runs or episode_test_runs (sqlite-utils
`transform` copies and drops a table, and SQLite drops its triggers with it) must create these
triggers again; a test checks they exist.
"""

from __future__ import annotations

__all__ = [
    "BUCKET_SECONDS",
    "INSERT_TRIGGERS",
    "SPANS",
    "COUNT_COLUMNS",
    "DIMENSIONS",
    "RETENTION_COLUMNS",
    "catch_up_statements",
    "dimension_value_sql",
    "ext_sql",
    "rollup_statements",
]

BUCKET_SECONDS = 900
SPANS = (86400, BUCKET_SECONDS)
DIMENSIONS = ("agent", "model", "ext", "all")

#: The proposal counts kept per rollup row, in order.
COUNT_COLUMNS = (
    "n",
    "shown",
    "applied",
    "rejected",
    "kept",
    "edited",
    "undone",
    "lost",
    "chars_added",
    "lines_added",
)
#: The checkpoint sums kept per rollup row (besides the window), in order.
RETENTION_COLUMNS = ("observed", "lost", "measured_chars", "survived_chars")


def _basename_sql(path: str) -> str:
    # rtrim(x, <every character of x but '/'>) keeps x up to its last '/'; removing that prefix
    # leaves the base name. SQLite has no reverse search, and this stays in C.
    return f"replace({path}, rtrim({path}, replace({path}, '/', '')), '')"


def ext_sql(path: str) -> str:
    """SQL for a file's extension with its dot, lower case ('.py'), or its lower-cased base name
    when it has none ('makefile')."""
    base = _basename_sql(path)
    ext = f"replace({base}, rtrim({base}, replace({base}, '.', '')), '')"
    return f"(CASE WHEN instr({base}, '.') > 0 THEN '.' || lower({ext}) ELSE lower({base}) END)"


def dimension_value_sql(dim: str, row: str) -> str:
    """SQL for the value of dimension `dim` (a SQL expression naming it) of proposal row `row`."""
    return (
        f"(CASE {dim} WHEN 'agent' THEN {row}.agent WHEN 'model' THEN coalesce({row}.model, '') "
        f"WHEN 'ext' THEN {ext_sql(row + '.path')} ELSE '' END)"
    )


_DIMS_SQL = " UNION ALL ".join(
    f"SELECT '{d}' AS dim" if i == 0 else f"SELECT '{d}'" for i, d in enumerate(DIMENSIONS)
)


_SPANS_SQL = " UNION ALL ".join(
    f"SELECT {span} AS span" if i == 0 else f"SELECT {span}" for i, span in enumerate(SPANS)
)
#: Every (dimension, span) pair a proposal is counted in: `d.dim` and `s.span`.
_TARGETS_SQL = f"({_DIMS_SQL}) d, ({_SPANS_SQL}) s"


def _bucket_sql(ts: str) -> str:
    return f"CAST({ts} / s.span AS INTEGER)"


def _count_values(row: str, sign: str) -> list[str]:
    applied = f"{row}.state = 'applied'"
    return [
        f"{sign}1",
        f"{sign}({row}.state = 'shown')",
        f"{sign}({applied})",
        f"{sign}({row}.state = 'rejected')",
        f"{sign}({row}.outcome = 'kept')",
        f"{sign}({row}.outcome = 'edited')",
        f"{sign}({row}.outcome = 'undone')",
        f"{sign}({row}.outcome = 'lost')",
        f"{sign}(CASE WHEN {applied} THEN {row}.chars_added ELSE 0 END)",
        f"{sign}(CASE WHEN {applied} THEN {row}.lines_added ELSE 0 END)",
    ]


def _upsert_counts(row: str, sign: str) -> str:
    columns = ", ".join(COUNT_COLUMNS)
    values = ", ".join(_count_values(row, sign))
    updates = ", ".join(f"{c} = {c} + excluded.{c}" for c in COUNT_COLUMNS)
    return (
        f"INSERT INTO report_counts (dim, span, bucket, workspace_id, value, {columns}) "
        f"SELECT d.dim, s.span, {_bucket_sql(row + '.created_at')}, "
        f"coalesce({row}.workspace_id, 0), {dimension_value_sql('d.dim', row)}, {values} "
        f"FROM {_TARGETS_SQL} WHERE true "
        f"ON CONFLICT (dim, span, bucket, workspace_id, value) DO UPDATE SET {updates};"
    )


def _retention_values(c: str, p: str, sign: str) -> list[str]:
    return [
        f"{sign}1",
        f"{sign}({c}.retention IS NULL)",
        f"{sign}(CASE WHEN {c}.retention IS NULL THEN 0 ELSE {p}.chars_added END)",
        f"{sign}coalesce({c}.retention * {p}.chars_added, 0.0)",
    ]


def _upsert_retention(c: str, p: str, sign: str, source: str) -> str:
    """Add (sign '') or remove (sign '-') checkpoint row `c` of proposal row `p`; `source` is the
    FROM list and WHERE condition that bring `c`, `p` and the dimensions `d` together."""
    columns = ", ".join(RETENTION_COLUMNS)
    values = ", ".join(_retention_values(c, p, sign))
    updates = ", ".join(f"{col} = {col} + excluded.{col}" for col in RETENTION_COLUMNS)
    return (
        f"INSERT INTO report_retention (dim, span, bucket, workspace_id, value, window, "
        f"window_seconds, {columns}) "
        f"SELECT d.dim, s.span, {_bucket_sql(p + '.created_at')}, "
        f"coalesce({p}.workspace_id, 0), {dimension_value_sql('d.dim', p)}, {c}.window, "
        f"{c}.window_seconds, {values} "
        f"FROM {source} "
        "ON CONFLICT (dim, span, bucket, workspace_id, value, window, window_seconds) "
        f"DO UPDATE SET {updates};"
    )


def _checkpoint_change(c: str, sign: str) -> str:
    # A checkpoint row does not carry its proposal's dimensions: they are read at trigger time.
    return _upsert_retention(
        c,
        "p",
        sign,
        f"proposals p, {_TARGETS_SQL} WHERE p.id = {c}.proposal_id AND {c}.observed_at IS NOT NULL",
    )


def _proposal_checkpoints_change(p: str, sign: str) -> str:
    """Move every observed checkpoint of proposal row `p` in or out of the rollup."""
    return _upsert_retention(
        "c",
        p,
        sign,
        f"checkpoints c, {_TARGETS_SQL} WHERE c.proposal_id = {p}.id AND c.observed_at IS NOT NULL",
    )


_BACKFILL_VALUE = (
    "(CASE d.dim WHEN 'agent' THEN b.agent WHEN 'model' THEN b.model "
    "WHEN 'ext' THEN b.ext ELSE '' END)"
)

_PROPOSAL_DIMENSIONS_CHANGED = (
    "OLD.workspace_id IS NOT NEW.workspace_id OR OLD.path IS NOT NEW.path "
    "OR OLD.agent IS NOT NEW.agent OR OLD.model IS NOT NEW.model "
    "OR OLD.created_at IS NOT NEW.created_at OR OLD.chars_added IS NOT NEW.chars_added"
)


def rollup_statements() -> list[str]:
    """The statements of migration m006_report: rollup tables, their triggers, a backfill from
    the rows already recorded, and the indexes the report's raw queries use (the test runs'
    rollups follow them in the migration: `capture.store.run_rollups`)."""
    count_columns = ",\n".join(f"{c} INTEGER NOT NULL DEFAULT 0" for c in COUNT_COLUMNS)
    finest_sums = ", ".join(
        f"sum({v}) AS {c}" for v, c in zip(_count_values("p", ""), COUNT_COLUMNS, strict=True)
    )
    return [
        f"""CREATE TABLE report_counts (
            dim TEXT NOT NULL,
            span INTEGER NOT NULL,
            bucket INTEGER NOT NULL,
            workspace_id INTEGER NOT NULL,
            value TEXT NOT NULL,
            {count_columns},
            PRIMARY KEY (dim, span, bucket, workspace_id, value)
        ) WITHOUT ROWID""",
        """CREATE TABLE report_retention (
            dim TEXT NOT NULL,
            span INTEGER NOT NULL,
            bucket INTEGER NOT NULL,
            workspace_id INTEGER NOT NULL,
            value TEXT NOT NULL,
            window TEXT NOT NULL,
            window_seconds REAL NOT NULL,
            observed INTEGER NOT NULL DEFAULT 0,
            lost INTEGER NOT NULL DEFAULT 0,
            measured_chars INTEGER NOT NULL DEFAULT 0,
            survived_chars REAL NOT NULL DEFAULT 0,
            PRIMARY KEY (dim, span, bucket, workspace_id, value, window, window_seconds)
        ) WITHOUT ROWID""",
        f"""CREATE TRIGGER report_proposal_insert AFTER INSERT ON proposals BEGIN
            {_upsert_counts("NEW", "")}
        END""",
        f"""CREATE TRIGGER report_proposal_delete AFTER DELETE ON proposals BEGIN
            {_upsert_counts("OLD", "-")}
        END""",
        f"""CREATE TRIGGER report_proposal_update AFTER UPDATE ON proposals
            WHEN OLD.state IS NOT NEW.state OR OLD.outcome IS NOT NEW.outcome
            OR OLD.lines_added IS NOT NEW.lines_added OR {_PROPOSAL_DIMENSIONS_CHANGED} BEGIN
            {_upsert_counts("OLD", "-")}
            {_upsert_counts("NEW", "")}
        END""",
        f"""CREATE TRIGGER report_proposal_moved AFTER UPDATE ON proposals
            WHEN {_PROPOSAL_DIMENSIONS_CHANGED} BEGIN
            {_proposal_checkpoints_change("OLD", "-")}
            {_proposal_checkpoints_change("NEW", "")}
        END""",
        f"""CREATE TRIGGER report_checkpoint_insert AFTER INSERT ON checkpoints
            WHEN NEW.observed_at IS NOT NULL BEGIN
            {_checkpoint_change("NEW", "")}
        END""",
        f"""CREATE TRIGGER report_checkpoint_delete AFTER DELETE ON checkpoints
            WHEN OLD.observed_at IS NOT NULL BEGIN
            {_checkpoint_change("OLD", "-")}
        END""",
        f"""CREATE TRIGGER report_checkpoint_update AFTER UPDATE ON checkpoints
            WHEN OLD.observed_at IS NOT NEW.observed_at OR OLD.retention IS NOT NEW.retention
            OR OLD.window IS NOT NEW.window OR OLD.window_seconds IS NOT NEW.window_seconds
            OR OLD.proposal_id IS NOT NEW.proposal_id BEGIN
            {_checkpoint_change("OLD", "-")}
            {_checkpoint_change("NEW", "")}
        END""",
        # Backfill what older versions recorded: once at the finest grain, then each
        # dimension and span from that (one sort of the rows instead of one per target).
        f"""CREATE TEMP TABLE report_backfill_counts AS
            SELECT CAST(p.created_at / {BUCKET_SECONDS} AS INTEGER) AS q,
            coalesce(p.workspace_id, 0) AS ws, p.agent AS agent,
            coalesce(p.model, '') AS model, {ext_sql("p.path")} AS ext,
            {finest_sums}
            FROM proposals p GROUP BY 1, 2, 3, 4, 5""",
        f"""INSERT INTO report_counts (dim, span, bucket, workspace_id, value,
            {", ".join(COUNT_COLUMNS)})
            SELECT d.dim, s.span, b.q * {BUCKET_SECONDS} / s.span, b.ws, {_BACKFILL_VALUE},
            {", ".join(f"sum(b.{c})" for c in COUNT_COLUMNS)}
            FROM report_backfill_counts b, {_TARGETS_SQL} GROUP BY 1, 2, 3, 4, 5""",
        "DROP TABLE report_backfill_counts",
        f"""CREATE TEMP TABLE report_backfill_retention AS
            SELECT CAST(p.created_at / {BUCKET_SECONDS} AS INTEGER) AS q,
            coalesce(p.workspace_id, 0) AS ws, p.agent AS agent,
            coalesce(p.model, '') AS model, {ext_sql("p.path")} AS ext,
            c.window AS window, c.window_seconds AS window_seconds, count(*) AS observed,
            sum(c.retention IS NULL) AS lost,
            sum(CASE WHEN c.retention IS NULL THEN 0 ELSE p.chars_added END) AS measured_chars,
            sum(coalesce(c.retention * p.chars_added, 0.0)) AS survived_chars
            FROM checkpoints c JOIN proposals p ON p.id = c.proposal_id
            WHERE c.observed_at IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6, 7""",
        f"""INSERT INTO report_retention (dim, span, bucket, workspace_id, value, window,
            window_seconds, {", ".join(RETENTION_COLUMNS)})
            SELECT d.dim, s.span, b.q * {BUCKET_SECONDS} / s.span, b.ws, {_BACKFILL_VALUE},
            b.window, b.window_seconds, {", ".join(f"sum(b.{c})" for c in RETENTION_COLUMNS)}
            FROM report_backfill_retention b, {_TARGETS_SQL} GROUP BY 1, 2, 3, 4, 5, 6, 7""",
        "DROP TABLE report_backfill_retention",
        # Raw queries: the most-undone files, a file's settled proposals, an episode's first
        # applied edit, test runs by time with their results, their links, their episodes.
        """CREATE INDEX proposals_report_undone
           ON proposals(created_at, workspace_id, path, agent, model) WHERE outcome = 'undone'""",
        """CREATE INDEX proposals_report_file
           ON proposals(workspace_id, path, created_at, outcome, agent, model)""",
        "CREATE INDEX proposals_report_episode_applied ON proposals(episode_id, applied_at)",
        """CREATE INDEX test_runs_report_started ON test_runs(started_at, id, command, exit_code,
           failed, errors, passed)""",
        """CREATE INDEX test_runs_report_id ON test_runs(id, started_at, command, exit_code,
           failed, errors, passed)""",
        "CREATE INDEX episode_test_runs_report ON episode_test_runs(test_run_id, episode_id)",
        """CREATE INDEX episodes_report_id ON episodes(id, started_at, agent, model,
           workspace_id)""",
        """CREATE INDEX episodes_report_started ON episodes(started_at, id, agent, model,
           workspace_id)""",
    ]


#: The triggers that add each inserted proposal and observed checkpoint to the rollups (and an
#: episode's first edit to its row). A bulk writer (an import) may drop them inside its write
#: transaction and, before it commits, add the rows it inserted meanwhile with
#: `catch_up_statements` and create them again: one grouped upsert instead of eight per row.
INSERT_TRIGGERS = (
    "report_proposal_insert",
    "report_checkpoint_insert",
    "report_episode_edit_insert",
)


def catch_up_statements() -> list[str]:
    """What the INSERT_TRIGGERS would have added for the proposals whose rowid is above
    `:proposals` and the checkpoints whose id is above `:checkpoints`: the same values, summed
    at the finest grain first and then into each dimension and span, as the migration's
    backfill does (equal but for the rounding of `survived_chars`, summed in another order);
    and the first edit of their episodes, which is the earliest one whatever the order."""
    finest = (
        f"CAST(p.created_at / {BUCKET_SECONDS} AS INTEGER) AS q, "
        "coalesce(p.workspace_id, 0) AS ws, p.agent AS agent, "
        f"coalesce(p.model, '') AS model, {ext_sql('p.path')} AS ext"
    )
    count_columns = ", ".join(COUNT_COLUMNS)
    count_sums = ", ".join(
        f"sum({v}) AS {c}" for v, c in zip(_count_values("p", ""), COUNT_COLUMNS, strict=True)
    )
    count_updates = ", ".join(f"{c} = {c} + excluded.{c}" for c in COUNT_COLUMNS)
    retention_columns = ", ".join(RETENTION_COLUMNS)
    retention_sums = ", ".join(
        f"sum({v}) AS {c}"
        for v, c in zip(_retention_values("c", "p", ""), RETENTION_COLUMNS, strict=True)
    )
    retention_updates = ", ".join(f"{c} = {c} + excluded.{c}" for c in RETENTION_COLUMNS)
    bucket = f"b.q * {BUCKET_SECONDS} / s.span"
    return [
        f"INSERT INTO report_counts (dim, span, bucket, workspace_id, value, {count_columns}) "
        f"SELECT d.dim, s.span, {bucket}, b.ws, {_BACKFILL_VALUE}, "
        f"{', '.join(f'sum(b.{c})' for c in COUNT_COLUMNS)} "
        f"FROM (SELECT {finest}, {count_sums} FROM proposals p WHERE p.rowid > :proposals "
        f"GROUP BY 1, 2, 3, 4, 5) b, {_TARGETS_SQL} WHERE true GROUP BY 1, 2, 3, 4, 5 "
        f"ON CONFLICT (dim, span, bucket, workspace_id, value) DO UPDATE SET {count_updates}",
        f"INSERT INTO report_retention (dim, span, bucket, workspace_id, value, window, "
        f"window_seconds, {retention_columns}) "
        f"SELECT d.dim, s.span, {bucket}, b.ws, {_BACKFILL_VALUE}, b.window, b.window_seconds, "
        f"{', '.join(f'sum(b.{c})' for c in RETENTION_COLUMNS)} "
        f"FROM (SELECT {finest}, c.window AS window, c.window_seconds AS window_seconds, "
        f"{retention_sums} FROM checkpoints c JOIN proposals p ON p.id = c.proposal_id "
        "WHERE c.id > :checkpoints AND c.observed_at IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6, 7) b, "
        f"{_TARGETS_SQL} WHERE true GROUP BY 1, 2, 3, 4, 5, 6, 7 "
        "ON CONFLICT (dim, span, bucket, workspace_id, value, window, window_seconds) "
        f"DO UPDATE SET {retention_updates}",
        "UPDATE report_episodes SET first_edit_at = (SELECT min(p.applied_at) FROM proposals p "
        "WHERE p.episode_id = report_episodes.episode_id AND p.applied_at IS NOT NULL) "
        "WHERE episode_id IN (SELECT episode_id FROM proposals "
        "WHERE rowid > :proposals AND applied_at IS NOT NULL)",
    ]
