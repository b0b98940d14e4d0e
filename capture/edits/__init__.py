"""What became of an agent's edit: where its text lives now and the outcome it earns.

Decides how a region moves through a change (`regions`, `compose` to fold many edits into one
changeset, `region_index` for many regions at once, `positions` for editor coordinates,
`textdiff` when only two versions are known), where a hunk sits right after the edit (`hunks`,
`unidiff`; `placement` rebuilds the edit's text from the file before it, places ambiguous new
text by the diff, carries hunks to a later text), finding it again by content (`relocate`), what
a checkpoint measures and which outcome that means (`tracking`, `outcomes`), and when
checkpoints fall due (`windows`).

Plain functions over plain data: no files, processes, clocks or database. May import only
`capture.errors`, `capture.model` and itself.
"""
