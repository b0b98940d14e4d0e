"""Hook payload logs as people keep them: what `capture import hooks` feeds, in order, through
`capture hook`. A log is a JSON array of payloads (the common `logs/<event>.json` of hook
scripts that append each payload they get), one payload (`.json`), or one payload a line
(`.jsonl`, `.log`). Pure: text in, payload texts out."""

from __future__ import annotations

import json

__all__ = ["LOG_SUFFIXES", "payloads_in"]

LOG_SUFFIXES = (".json", ".jsonl", ".log")


def payloads_in(name: str, text: str) -> tuple[list[str], int]:
    """The payloads of one log file as JSON texts, in the order it holds them, and how many of
    its entries are no JSON object (counted, never fed)."""
    if name.endswith(".json"):
        try:
            value = json.loads(text)
        except ValueError:
            return [], 1
        entries = value if isinstance(value, list) else [value]
        out = [json.dumps(e) for e in entries if isinstance(e, dict)]
        return out, len(entries) - len(out)
    out, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(value, dict):
            out.append(line)
        else:
            bad += 1
    return out, bad
