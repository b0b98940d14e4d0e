"""agent-capture: what coding agents proposed, what became of it, and the tests that followed.

The core, by stage of the pipeline, lowest layer first. A folder imports its own modules and
lower layers only: never a higher layer, never another folder of its own layer
(`tests/unit/test_layering.py` holds it to that, and to this map). Each folder's docstring says
what it decides, and where it imports less than its layer allows. Nothing in the core imports
`server` or `sync` but the CLI.

    0  errors, model, dirs, files, globs     shared by every stage
    0  connection      the one SQLite connection factory (and its library's version)
    0  moments         which times are believable on entry and readable when stored
    1  edits/          where an edit's text lives now, and the outcome it earns (pure)
    1  paths           the XDG paths of the database, config and logs (`dirs`, with `os` alone)
    1  install/        our entries in each agent's settings
    1  followups/      how the user's next prompt reads (pure)
    2  testruns/       what a test run says, and which episodes it is evidence for
    2  config          config.toml and environment overrides
    2  tiers/          which quality tier a proposal and an episode earn, and why (pure)
    3  episode/        the episode contract: its parts, words and shapes, one typed definition
    4  store/          the SQLite store: schema, every SQL statement, rollups, the episode JSON
    5  recording/      the recording front door every source calls; due checkpoints, late pass
    6  testruns/sources/   where runs come from: `capture run`, the pytest plugin, JUnit files
    7  hooks/          agent hooks: the fast lane, each agent's payloads, applying the queue
    7  telemetry/      the agents' OpenTelemetry: the OTLP receiver, decisions from events
    8  importers/      backfilling history from agents' transcripts
    8  report/         personal statistics
    8  watch/          the watcher for terminal agents: pending files followed on disk
    9  export/         training data: tiers into the formats trainers load
   10  cli/            the `capture` command, a thin shell over all of the above
   11  __main__        `python -m capture`
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
