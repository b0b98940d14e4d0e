"""Recording what happened: a proposal or a test run appended to the event log and applied to
the tables in one transaction (`recorder`), checkpoints that fall due evaluated against the
files on disk (`observer`), and the JSON input of `capture propose` (`propose_input`).

The shell between the world and the core's decisions: reads files, calls `capture.edits` and
`capture.testruns`, writes through `capture.store`. Never imports what calls it (hooks, test-run
sources, importers, report, CLI, `server`, `sync`).
"""
