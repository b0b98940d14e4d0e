"""Backfilling history from agent transcripts and git.

Each transcript is recorded in one transaction: its edits as proposals marked `backfilled`
(source `import`) with outcomes judged at once, its test commands as test runs, grouped into
episodes by the agent's session and turn ids. Keys are the ones the live hooks use, so an edit
recorded by a hook is not recorded again, and importing twice adds nothing twice.

`records` holds what a transcript says (plain data); `claude_transcript` and `codex_rollout`
read each agent's transcripts into it (pure); `judge` finds a past edit's outcome in one later
text; `git_history` the first commit after an edit; `prepare` a transcript read and judged with
no database (in worker processes); `write` prepared transcripts into the store (in the main
process, through the recording front door, `capture.recording.recorder`); `backfill` imports
transcript files (worker pool, batches, skipping files imported before); `aider` aider's edits
from its git commits; `hook_logs` the payloads of kept hook logs (what `capture import hooks`
replays through `capture hook`).

May import everything below them in `capture/__init__.py`'s map: `capture.hooks.agents` to
read transcripts, `capture.recording`, `capture.store`, `capture.edits`, `capture.testruns`,
`capture.config` and the shared modules; never `capture.report`, `capture.cli`, `server` or
`sync`. No SQL here: which files were imported is `capture.store.import_rows`'.
"""
