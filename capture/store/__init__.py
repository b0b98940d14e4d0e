"""The local SQLite store: the rendezvous point of editor windows, hook commands and watchers,
and the one place that holds SQL for the local database (`tests/unit/test_layering.py` holds
every other module of the core and the server to calling it).

`database` holds `Store` (opening the connection, its settings, the event log, the deferred
rollups), which inherits its rows from one mixin per kind: `proposal_rows` (proposals, hunks,
regions, baselines, live proposals), `checkpoint_rows` (checkpoints, outcomes, settling),
`run_rows` (test runs, their results and links) and `episode_rows` (turns adopted and ended,
past sessions closed), all built on `row_groups` (the write transaction and its steps,
workspaces, opening episodes). Module functions over a connection hold the rest: `inbox_rows`
the hooks' queue (the fast lane's one INSERT; imports nothing but `capture.connection`),
`hook_rows` what a hook call leaves for the next, `import_rows` the files an import read,
`report_queries` the SQL behind `capture report`, `export_rows` an export's selection,
`tier_rows` the history of tier decisions, `late_signal_rows` each proposal's late signals,
`summary_rows` what `doctor` and `demo` show. `schema` holds the core's numbered migrations, and
`migration_sets` those a package beside the core registers for the tables it owns (sync's
settings and outbox: the core creates none of them, and the tiers read only the outbox's
quarantine flag, absent where sync was never used); `proposal_rollups` and `run_rollups` the
report's rollup tables and triggers (one way: the run rollups build on the proposal rollups'
spans); `ids` time-ordered record ids; `episodes` the episode JSON read back from the store.
Connections are made by `capture.connection`, as in every process that writes the database.

May import `capture.errors`, `capture.model`, `capture.connection`, `capture.edits`,
`capture.testruns` and `capture.tiers` (the decisions it applies inside a transaction), never
what records into it. Stdlib `sqlite3` only on the paths a hook call takes: sqlite-utils is
imported when a migration runs.
"""
