"""Recording what happened: a proposal or a test run appended to the event log and applied to
the tables in one transaction (`recorder`), checkpoints that fall due evaluated against the
files on disk (`observer`), the JSON input of `capture propose` (`propose_input`), the late pass
over git (`late_git`, with `late_syntax`) and the tiers recomputed from what is stored
(`late_tiers`).

The shell between the world and the core's decisions: reads files and git, calls
`capture.edits`, `capture.testruns` and `capture.tiers`, writes through `capture.store`. Never
imports what calls it (hooks, test-run sources, importers, report, CLI, `server`, `sync`).
"""
