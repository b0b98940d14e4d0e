"""OpenAI's fine-tuning JSONL: chat (supervised) and preference (DPO), from examples.

OpenAI's validator accepts only its own keys on a line, so these rows carry no id or tier (the
datasheet and the canonical export hold those).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from capture.export.examples import NEGATIVE_TIERS, Example
from capture.export.trl import sft_answer

__all__ = ["SYSTEM_PROMPT", "chat_rows", "preference_rows"]

SYSTEM_PROMPT = "You are a coding assistant. Answer with the code that replaces the marked span."


def chat_rows(example: Example) -> Iterator[dict[str, Any]]:
    answer = sft_answer(example)
    if answer is not None:
        yield {
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": example.prompt},
                {"role": "assistant", "content": answer},
            ]
        }


def preference_rows(example: Example) -> Iterator[dict[str, Any]]:
    chosen = example.chosen
    if example.tier in NEGATIVE_TIERS and chosen is not None:
        yield {
            "input": {
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": example.prompt},
                ]
            },
            "preferred_output": [{"role": "assistant", "content": chosen}],
            "non_preferred_output": [{"role": "assistant", "content": example.agent_text}],
        }
