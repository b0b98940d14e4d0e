"""agent-capture: what coding agents proposed, what became of it, and the tests that followed.

The core, by stage of the pipeline (each folder's docstring says what it decides and what it
may import; `tests/unit/test_layering.py` holds them to it):

    errors, model, dirs, paths, files, globs, config   shared by every stage
    edits/       where an edit's text lives now, and the outcome it earns (pure)
    testruns/    what a test run says, and which episodes it is evidence for (pure)
    store/       the SQLite store: schema, writes, rollups, the episode JSON
    recording/   the world into the store: proposals, test runs, due checkpoints
    testruns/sources/   where runs come from: `capture run`, the pytest plugin, JUnit files
    hooks/       agent hooks: the fast lane, each agent's payloads, applying the queue
    importers/   backfilling history from agents' transcripts
    install/     our entries in each agent's settings
    report/      personal statistics
    cli/         the `capture` command, a thin shell over all of the above

Lower lines never import higher ones; nothing here imports `server` or `sync`.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
