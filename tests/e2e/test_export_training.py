"""A real training smoke test: TRL's SFTTrainer, DPOTrainer and KTOTrainer run two steps each on
what `capture export` wrote, with a tiny randomly initialised model and a tokenizer built here
(no download, CPU only, the hub offline)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_train_extra
from tests.support.export_support import Recorded, record_scenario

require_train_extra("torch", "trl", "datasets")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    root = tmp_path_factory.mktemp("train")
    recorded: Recorded = record_scenario(root)
    out = root / "out"
    proc = recorded.run(
        "export", "--out", str(out), "--format", "sft-messages,sft,dpo,kto", "--level", "full"
    )
    assert proc.returncode == 0, proc.stderr
    return out


def _load(path: Path) -> Any:
    from datasets import load_dataset

    # a cache beside the data: nothing written to the user's own Hugging Face cache
    cache = str(path.parent.parent / "hf-cache")
    return load_dataset("json", data_files=str(path), split="train", cache_dir=cache)


def _common(output_dir: Path) -> dict[str, Any]:
    return {
        "output_dir": str(output_dir),
        "max_steps": 2,
        "per_device_train_batch_size": 2,
        "report_to": [],
        "use_cpu": True,
        "save_strategy": "no",
        "logging_steps": 1,
        "max_length": 512,
        "seed": 0,
    }


def _tokenizer(out: Path) -> Any:
    from tests.support.trl_support import texts_of, tiny_tokenizer

    return tiny_tokenizer(texts_of(sorted(out.glob("*.jsonl"))))


def _trained(trainer: Any) -> Any:
    result = trainer.train()
    assert result.global_step == 2
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(loss == loss and loss > 0 for loss in losses)  # no NaN
    return result


@pytest.mark.parametrize("name", ["sft-messages", "sft"])
def test_sft_trainer_runs_two_steps(exported: Path, tmp_path: Path, name: str) -> None:
    from trl import SFTConfig, SFTTrainer

    from tests.support.trl_support import tiny_model

    tokenizer = _tokenizer(exported)
    trainer = SFTTrainer(
        model=tiny_model(tokenizer),
        args=SFTConfig(**_common(tmp_path)),
        train_dataset=_load(exported / f"{name}.jsonl"),
        processing_class=tokenizer,
    )
    _trained(trainer)


def test_dpo_trainer_runs_two_steps(exported: Path, tmp_path: Path) -> None:
    from trl import DPOConfig, DPOTrainer

    from tests.support.trl_support import tiny_model

    tokenizer = _tokenizer(exported)
    trainer = DPOTrainer(
        model=tiny_model(tokenizer),
        ref_model=tiny_model(tokenizer),
        args=DPOConfig(**_common(tmp_path)),
        train_dataset=_load(exported / "dpo.jsonl"),
        processing_class=tokenizer,
    )
    _trained(trainer)


def test_kto_trainer_runs_two_steps(exported: Path, tmp_path: Path) -> None:
    from trl import KTOConfig, KTOTrainer

    from tests.support.trl_support import tiny_model

    tokenizer = _tokenizer(exported)
    trainer = KTOTrainer(
        model=tiny_model(tokenizer),
        ref_model=tiny_model(tokenizer),
        args=KTOConfig(**_common(tmp_path)),
        train_dataset=_load(exported / "kto.jsonl"),
        processing_class=tokenizer,
    )
    _trained(trainer)
