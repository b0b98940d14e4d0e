"""Where test runs come from, and how each is recorded: the `capture run` wrapper (`wrapper`,
running the command in `passthrough`, handing a plain run to the hook queue in `handoff`), the
pytest plugin (`pytest_plugin`), and the JUnit watcher (`junit_watcher`); `in_progress` marks
a run under way so that no other source records it too. (An agent's shell tool call is the
fourth source: `capture.hooks`.)

Shells: they read the world and record through the front door (`capture.recording.recorder`),
asking the store (`capture.store`) what they need to know. May
import everything below them (`capture.testruns`, `capture.store`, `capture.recording`,
`capture.config`, ...), never the hooks, importers, report, CLI, `server` or `sync`. The pytest
plugin is imported by every pytest session of the user's, so it imports nothing of ours at its
module level: the store is opened at the session's end.
"""
