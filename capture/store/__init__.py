"""The local SQLite store: the rendezvous point of editor windows, hook commands and watchers.

`database` holds `Store` (opening the connection, the event log, the deferred rollups), which
inherits its writes from one mixin per kind of row: `proposal_rows` (proposals, hunks, regions,
baselines), `checkpoint_rows` (checkpoints, outcomes, settling) and `run_rows` (test runs, their
results and links), all built on `row_groups` (the write transaction, workspaces, episodes).
`schema` holds the core's numbered migrations, and `migration_sets` those a package beside the
core registers for the tables it owns (sync's settings and outbox: the core creates none of
them, and the tiers read only the outbox's quarantine flag, absent where sync was never used);
`proposal_rollups` and `run_rollups` the report's rollup
tables and triggers (one way: the run rollups build on the proposal rollups' spans); `ids`
time-ordered record ids; `episodes` the episode JSON read back from the store; `tier_rows` the
history of tier decisions; `late_signal_rows` each proposal's late signals. Connections are
made by `capture.connection`, as in every process that writes the database.

May import `capture.errors`, `capture.model`, `capture.connection`, `capture.edits`,
`capture.testruns` and `capture.tiers` (the decisions it applies inside a transaction), never
what records into it. Stdlib `sqlite3` only on the paths a hook call takes: sqlite-utils is
imported when a migration runs.
"""
