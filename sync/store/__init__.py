"""Sync's tables in the local store, and every SQL statement sync runs on the local database.

    schema          sync's migrations (`sync_settings`, `sync_workspaces`, `sync_outbox`,
                    `sync_episodes`), registered with the store as the set `sync`;
                    `open_store` opens the store with them, `sync_tables` makes sure of them on
                    a connection opened by anyone
    settings_rows   the settings row and the workspaces' opt-ins and opt-outs
    outbox_rows     the outbox's rows: queued, sent, set aside, quarantined, superseded
    episode_rows    the episodes' fingerprints and what was last projected of each, and the
                    facts about episodes and workspaces `capture sync` shows

Each function takes a connection (a `Store`'s) and makes sure of sync's tables on it first: the
store may have been created by a hook or the server, which never apply sync's migrations. The
decisions about these rows stay in `sync.settings`, `sync.outbox` and `sync.refresh`; the
collector's own database is `sync.collector`'s storage, not this.
"""
