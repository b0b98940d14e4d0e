"""The episode contract: one typed definition of the episode and its parts, from which every
description of it is produced.

- `vocabulary`: its words (outcomes, states, tiers and their reasons, test-run evidence, levels,
  how a field is shared). Where a decision owns a word, it is defined there and named here.
  Imports no msgspec: the CLI and the collector read the words without the types.
- `fields`: the value types fields share, and each field's mark (`doc(...)`: a one-line
  description, how it is shared, where it is required).
- `model`: the episode and its parts as the store gives them (`capture episodes --json`), and
  the parts anonymization and the export add.
- `variants`: the shapes derived from `model`: an upload, and a line of the canonical export.
- `schemas`: their JSON Schemas (the export's shipped file, the collector's upload schema).
- `codec`: `capture episodes --json` encoded from the types, and read back strictly.
- `reference`: `schema_markdown()`, the documentation's reference page.

Why msgspec: its structs decode and validate JSON straight from bytes into typed values, fast
enough for the collector's ingest path; it generates JSON Schema from the same types, so the
shipped schema and the collector's are outputs, not copies; and it is one small compiled
dependency, with no runtime dependency on pydantic or another framework in the core. The
hook's fast lane never imports it.

May import `capture.model`, `capture.edits` (the evidence words), `capture.testruns` and
`capture.tiers` only: the words of the decisions, nothing that touches the world.
"""
