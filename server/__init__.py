"""The LSP sidecar (`capture serve`): a shell that turns an editor's messages into calls of the
core.

``app`` holds the LSP wiring; each other module is one feature or one piece of machinery:
``buffer`` (the document model), ``documents`` (open documents, the per-keystroke path),
``proposals`` (following agent edits: ``live_proposal`` is one of them in memory,
``proposal_jobs`` what the writer thread does for them), ``checkpoints`` (the timer),
``watcher`` (disk), ``pickup`` (proposals other processes recorded), ``writer`` (the thread
that writes), ``stored`` (reading live proposals back), ``testruns``, ``junit_reports`` (JUnit
files that appear in the workspaces), ``undo``, ``stats``, ``params`` (checking the
``capture/*`` params), ``workspaces`` (which folder a file belongs to, and whether it lies in the
editor's folders at all), ``logs``, ``termination`` (SIGTERM and SIGHUP ending like ``exit``),
and the wire's defences: ``framing`` (splitting the byte stream, resynchronising after stray
bytes and overrun lengths), ``envelope`` (JSON-RPC envelopes pygls cannot take) and
``surrogates`` (lone surrogates, escaped for the store).
"""
