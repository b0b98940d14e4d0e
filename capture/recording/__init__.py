"""Recording what happened. `recorder` is the front door every source records through (hooks,
importers, the server, `capture propose`, the test-run sources): a `Recorder` appends each input
(a proposal, an edit, a decision, a test run, a turn's start and end) to the event log and
applies it to the tables in one transaction, and is the one caller of the store's proposal
write. Besides: checkpoints that fall due evaluated against the files on disk (`observer`), the
JSON input of `capture propose` (`propose_input`), the late pass over git (`late_git`, with
`late_syntax`) and the tiers recomputed from what is stored (`late_tiers`).

The shell between the world and the core's decisions: reads files and git, calls
`capture.edits`, `capture.testruns` and `capture.tiers`, reads and writes through
`capture.store` (which holds every SQL statement). Never imports what calls it (hooks, test-run
sources, importers, report, CLI, `server`, `sync`).
"""
