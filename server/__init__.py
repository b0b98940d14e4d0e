"""The LSP sidecar (`capture serve`): a shell that turns an editor's messages into calls of the
core.

``app`` holds the LSP wiring (dispatch, lifecycle)
and knows each feature only as a :class:`server.feature.Feature`; ``feature`` says what a
feature is and what it is given (the shared services, the events between features); ``main``,
the composition root, builds the features and registers them; ``transport`` serves one client
over stdio or TCP. No feature imports the wiring.

The features: ``documents`` (open documents, the per-keystroke path, each a ``document``),
``proposals`` (following agent edits: ``live_proposal`` is one of them in memory,
``proposal_jobs`` what the writer thread does for them), ``checkpoints`` (the timer),
``watcher`` (disk), ``pickup`` (proposals other processes recorded), ``testruns``,
``junit_reports`` (JUnit files that appear in the workspaces), ``undo``, ``stats``.

The machinery they share: ``writer`` (the thread that writes), ``stored`` (reading live
proposals back), ``buffer`` (the document model), ``params`` (checking the ``capture/*``
params), ``workspaces`` (which folder a file belongs to, and whether it lies in the editor's
folders at all), ``logs``, ``termination`` (SIGTERM and SIGHUP ending like ``exit``), and the
wire's defences: ``framing`` (splitting the byte stream, resynchronising after stray bytes and
overrun lengths), ``envelope`` (JSON-RPC envelopes pygls cannot take) and ``surrogates`` (lone
surrogates, escaped for the store).
"""
