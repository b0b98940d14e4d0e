"""The watcher for terminal agents (`capture watch`): one background process per installation
that follows, with watchdog, the files with pending checkpoints, records each change through
the recording front door, evaluates every checkpoint at its due time, runs the late pass when a
known repository's HEAD moves, and exits when nothing has been pending for a while.

`lock` (one watcher per installation, and the cheap "does one run?" the hook asks), `spawn`
(started detached by the hook), `ownership` (files a live editor server holds are its own),
`heads` (when a repository's HEAD moved), `files` (the watches, or polling where the system
refuses them), `loop` (the watcher), `service` (a systemd user unit or a launchd agent).
Layer 8: imports the recording front door and below, never the hooks, importers or report.
"""
