"""The team collector: shared storage for the episodes a team's members opted to upload.

Layout: `app` wires the HTTP service; `wire` holds the JSON schemas of what crosses the wire;
`validation`, `ingest`, `report`, `tokens` and `limits` are plain functions; `storage` picks a
backend (`storage_sqlite`, `storage_postgres`), each with its own numbered migrations.
"""

__all__: list[str] = []
