"""Agent hooks: what `capture hook <agent>` does with one payload.

The fast lane (`inbox`) queues the payload as received, with `snapshot`'s copy of the files it
names, and returns to the agent; `payloads` says whether a payload is readable at all; `agents`
reads each agent's payloads into facts (pure, one module per agent); `ingest` applies the queue
to the store (`edit_records` turns an edit into a proposal at the hook's moment, `roots` finds
its workspace); `sessions` keeps what one call leaves for the next (pending edits, session
starts, turn ends); `log` writes what a call could not use.

`inbox`, `snapshot` and `payloads` import only the stdlib (`os`, `sys`, `time`, `sqlite3`,
`stat`; `json` once a payload is parsed, which the fast lane never does) and `capture.dirs`:
every agent tool call pays for them. The rest may import everything below the hooks
(`capture.recording`, `capture.store`, `capture.testruns` and its sources: `ingest` applies the
runs `capture run` queued through `capture.testruns.sources.wrapper`), never the importers,
report, CLI, `server` or `sync`.
"""
