"""TRL's dataset formats (huggingface.co/docs/trl/dataset_formats), from examples.

- `sft-messages`: conversational language modelling, `messages` = the user's prompt and the
  answer (the agent's text for gold/silver; the user's final text for edited);
- `sft`: the same as standard prompt-completion strings; TRL joins the two as they are, so the
  prompt ends with `COMPLETION_CUE` (in the conversational forms the chat template separates);
- `dpo`: conversational preference, `chosen` = the user's final version or a kept sibling,
  `rejected` = the agent's text;
- `kto`: conversational unpaired preference, `label` true for gold/silver agent text, false for
  the agent's edited/rejected/undone/debt text.

Each row carries `id` (proposal id and hunk) and `tier` beside the trainer's columns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from capture.export.examples import NEGATIVE_TIERS, POSITIVE_TIERS, Example

__all__ = [
    "COMPLETION_CUE",
    "dpo_rows",
    "kto_rows",
    "sft_answer",
    "sft_completion_rows",
    "sft_message_rows",
]


#: Where a standard (not conversational) prompt ends and the answer begins.
COMPLETION_CUE = "\n\nReplacement:\n"


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def sft_answer(example: Example) -> str | None:
    """The answer to imitate: the agent's kept text, or the user's own version of an edit."""
    if example.tier in POSITIVE_TIERS and example.agent_text.strip():
        return example.agent_text
    if example.tier == "edited" and example.final_text is not None:
        return example.final_text
    return None


def sft_message_rows(example: Example) -> Iterator[dict[str, Any]]:
    answer = sft_answer(example)
    if answer is not None:
        yield {
            "id": example.id,
            "tier": example.tier,
            "messages": [_user(example.prompt), _assistant(answer)],
        }


def sft_completion_rows(example: Example) -> Iterator[dict[str, Any]]:
    answer = sft_answer(example)
    if answer is not None:
        yield {
            "id": example.id,
            "tier": example.tier,
            "prompt": example.prompt + COMPLETION_CUE,
            "completion": answer,
        }


def dpo_rows(example: Example) -> Iterator[dict[str, Any]]:
    chosen = example.chosen
    if example.tier in NEGATIVE_TIERS and chosen is not None:
        yield {
            "id": example.id,
            "tier": example.tier,
            "prompt": [_user(example.prompt)],
            "chosen": [_assistant(chosen)],
            "rejected": [_assistant(example.agent_text)],
        }


def kto_rows(example: Example) -> Iterator[dict[str, Any]]:
    if example.tier in POSITIVE_TIERS or example.tier in NEGATIVE_TIERS:
        if not example.agent_text.strip():
            return  # a pure deletion: nothing for the model to have written
        yield {
            "id": example.id,
            "tier": example.tier,
            "prompt": [_user(example.prompt)],
            "completion": [_assistant(example.agent_text)],
            "label": example.tier in POSITIVE_TIERS,
        }
