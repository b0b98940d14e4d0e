"""Training export: the store's episodes, with their tiers, in the formats trainers load as they
are (TRL SFT/DPO/KTO, OpenAI chat and preference JSONL), one canonical episode JSONL documented
by `episode.schema.json`, and Agent Trace attribution records.

`examples` decides what a prompt, a completion, a chosen and a rejected text are; one module per
format family (`trl`, `openai`, `canonical`, `agent_trace`) turns those into rows, all pure.
`selection` streams episodes out of the store page by page with their tiers and regions (the
SQL is `capture.store.export_rows`');
`split`, `dedupe` and `datasheet` are small pure steps; `writer` runs them into files. The
anonymizer is handed in by the CLI (the core never imports `sync`).
"""

from capture.export.formats import FORMATS, Format, parse_formats
from capture.export.writer import ExportPlan, ExportResult, run_export

__all__ = ["FORMATS", "ExportPlan", "ExportResult", "Format", "parse_formats", "run_export"]
