"""The agents' own telemetry: what `capture otlp` receives over OTLP/HTTP and what it means.

`otlp_decode` turns a request body (protobuf or JSON, logs, metrics or traces) into flat
events, with the identity attributes the agents attach to every record dropped on receipt;
`events` holds those plain values; one translator per agent (`claude_code`, `codex`,
`gemini`, `copilot`, gathered by `translate`) reads events into decisions on proposals (pure);
`apply` records them through the recording front door; `receiver` is the HTTP server, which
`capture otlp` runs in the foreground and another process may run on a thread of its own.

May import everything below the hooks (`capture.recording`, `capture.store`), never the
hooks, importers, report, CLI, `server` or `sync`.
"""
