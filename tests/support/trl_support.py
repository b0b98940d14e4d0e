"""A tiny causal language model and its tokenizer, built here from a config and the exported
text: nothing is downloaded, and two training steps take seconds on a CPU."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["CHAT_TEMPLATE", "texts_of", "tiny_model", "tiny_tokenizer"]

#: A template whose rendering of a prompt is a prefix of its rendering of prompt + answer, as
#: TRL's preference and prompt-completion preparation require.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}<|end|>"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
_SPECIALS = ["<pad>", "<unk>", "<s>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>"]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def texts_of(files: list[Path]) -> list[str]:
    return [
        s for f in files for line in f.read_text().splitlines() for s in _strings(json.loads(line))
    ]


def tiny_tokenizer(corpus: list[str]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=_SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="<|end|>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_model(tokenizer: Any) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return LlamaForCausalLM(config)
