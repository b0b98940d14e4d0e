"""The export formats by name: what each is made from and whether it needs the code's text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from capture.edits.evidence import EvidenceKind
from capture.export import openai, trl
from capture.export.examples import Example
from capture.tiers.model import Tier

__all__ = ["FORMATS", "Format", "parse_evidence", "parse_formats", "parse_tiers"]


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    help: str
    #: rows per example (per hunk); None for the per-episode formats
    rows: Callable[[Example], Iterator[dict[str, Any]]] | None
    #: the format is made of code and prompts: not at the metrics level
    needs_text: bool
    #: which columns a dedupe compares (the row's id and tier aside)
    dedupe_keys: tuple[str, ...] = ()


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "sft-messages",
            "TRL SFT, conversational `messages`",
            trl.sft_message_rows,
            True,
            ("messages",),
        ),
        Format(
            "sft",
            "TRL SFT, `prompt`/`completion` strings",
            trl.sft_completion_rows,
            True,
            ("prompt", "completion"),
        ),
        Format(
            "dpo",
            "TRL DPO, `prompt`/`chosen`/`rejected`",
            trl.dpo_rows,
            True,
            ("prompt", "chosen", "rejected"),
        ),
        Format(
            "kto",
            "TRL KTO, `prompt`/`completion`/`label`",
            trl.kto_rows,
            True,
            ("prompt", "completion", "label"),
        ),
        Format(
            "openai-chat",
            "OpenAI chat fine-tuning JSONL",
            openai.chat_rows,
            True,
            ("messages",),
        ),
        Format(
            "openai-preference",
            "OpenAI preference fine-tuning JSONL",
            openai.preference_rows,
            True,
            ("input", "preferred_output", "non_preferred_output"),
        ),
        Format("episodes", "canonical episode JSONL (episode.schema.json)", None, False),
        Format("agent-trace", "Agent Trace 0.1.0 attribution records", None, False),
    )
}


def parse_formats(text: str) -> tuple[Format, ...]:
    """`sft,dpo` -> the formats, in the order given; ValueError names an unknown one."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("--format needs at least one format")
    unknown = [n for n in names if n not in FORMATS]
    if unknown:
        raise ValueError(f"unknown format {unknown[0]!r} (use {', '.join(FORMATS)})")
    return tuple(dict.fromkeys(FORMATS[n] for n in names))


def parse_tiers(text: str) -> frozenset[str]:
    """`gold,silver` -> the tiers; ValueError names an unknown one."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    known = [t.value for t in Tier]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        what = f"unknown tier {unknown[0]!r}" if unknown else "--tiers needs at least one tier"
        raise ValueError(f"{what} (use {', '.join(known)})")
    return frozenset(names)


def parse_evidence(text: str) -> frozenset[str]:
    """`buffer,git` -> the evidence kinds; ValueError names an unknown one."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    known = [k.value for k in EvidenceKind]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        what = (
            f"unknown evidence kind {unknown[0]!r}"
            if unknown
            else "--evidence needs at least one kind"
        )
        raise ValueError(f"{what} (use {', '.join(known)})")
    return frozenset(names)
