"""`capture export` through the real process, on a store recorded through the real CLI: every
format loads with `datasets.load_dataset("json", ...)` and passes the trainers' own checks, and
each row says what the recorded edits were."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_train_extra
from tests.support.export_support import (
    AGENT_BODY,
    EDITED_BODY,
    RETRY_BODY,
    SECRET,
    Recorded,
    record_scenario,
)

require_train_extra("datasets", "trl")

ALL = "sft-messages,sft,dpo,kto,openai-chat,openai-preference,episodes,agent-trace"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    return record_scenario(tmp_path_factory.mktemp("export"))


def export(recorded: Recorded, out: Path, *args: str) -> dict[str, Any]:
    proc = recorded.run("export", "--out", str(out), *args)
    assert proc.returncode == 0, proc.stderr
    # stderr is not a terminal here: no progress bar, only the one-line summary
    assert "\x1b" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("capture export: ")
    sheet: dict[str, Any] = json.loads((out / "datasheet.json").read_text())
    return sheet


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def load(path: Path) -> Any:
    from datasets import load_dataset

    # a cache beside the data: nothing written to the user's own Hugging Face cache
    cache = str(path.parent.parent / "hf-cache")
    return load_dataset("json", data_files=str(path), split="train", cache_dir=cache)


def tiny_tokenizer_for(out: Path) -> Any:
    from tests.support.trl_support import texts_of, tiny_tokenizer

    return tiny_tokenizer(texts_of(sorted(out.glob("*.jsonl"))))


def test_every_format_at_full_level(recorded: Recorded, tmp_path: Path) -> None:
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    out = tmp_path / "full"
    sheet = export(recorded, out, "--format", ALL, "--level", "full")
    ids = recorded.proposals
    tokenizer = tiny_tokenizer_for(out)

    # SFT: the gold and silver agent text, and the user's own version of the edited one
    sft = load(out / "sft-messages.jsonl")
    assert set(sft.column_names) >= {"messages"}
    answers = {r["id"]: r["messages"][-1]["content"] for r in sft}
    assert answers == {
        f"{ids['kept.py']}:0": AGENT_BODY,
        f"{ids['retry.py']}:0": RETRY_BODY,
        f"{ids['edited.py']}:0": EDITED_BODY,
    }
    first = sft[0]
    assert is_conversational(first)
    assert "Make total() add up the items." in first["messages"][0]["content"]
    assert "<edit>    return 0\n</edit>" in first["messages"][0]["content"]
    rendered = maybe_apply_chat_template({"messages": first["messages"]}, tokenizer)
    assert rendered["text"].startswith("<|user|>Make total()")

    completion = load(out / "sft.jsonl")
    assert set(completion.column_names) >= {"prompt", "completion"}
    assert not is_conversational(completion[0])
    assert sorted(completion["completion"]) == sorted(answers.values())

    # DPO: edited -> the user's text over the agent's; rejected -> the kept retry over it
    dpo = load(out / "dpo.jsonl")
    pairs = {r["id"]: (r["chosen"][0]["content"], r["rejected"][0]["content"]) for r in dpo}
    assert pairs == {
        f"{ids['edited.py']}:0": (EDITED_BODY, AGENT_BODY),
        f"{ids['rejected']}:0": (RETRY_BODY, "    return len(items)\n"),
    }
    assert is_conversational(dpo[0])
    templated = maybe_apply_chat_template(dpo[0], tokenizer)
    assert templated["prompt"].endswith("<|assistant|>")
    assert templated["chosen"] == EDITED_BODY + "<|end|>"

    # KTO: positives and negatives, labelled
    kto = load(out / "kto.jsonl")
    labels = {r["id"]: r["label"] for r in kto}
    assert labels == {
        f"{ids['kept.py']}:0": True,
        f"{ids['retry.py']}:0": True,
        f"{ids['edited.py']}:0": False,
        f"{ids['undone.py']}:0": False,
        f"{ids['rejected']}:0": False,
    }
    assert set(maybe_apply_chat_template(kto[0], tokenizer)) >= {"prompt", "completion", "label"}

    # OpenAI: only its own keys on a line
    chat = rows(out / "openai-chat.jsonl")
    assert all(set(r) == {"messages"} for r in chat)
    assert [m["role"] for m in chat[0]["messages"]] == ["system", "user", "assistant"]
    load(out / "openai-chat.jsonl")
    pref = rows(out / "openai-preference.jsonl")
    assert all(set(r) == {"input", "preferred_output", "non_preferred_output"} for r in pref)
    assert {r["preferred_output"][0]["content"] for r in pref} == {EDITED_BODY, RETRY_BODY}
    load(out / "openai-preference.jsonl")

    # the canonical line: every signal, the tier history, valid against the shipped schema
    import jsonschema

    schema = json.loads((out / "episode.schema.json").read_text())
    (episode,) = rows(out / "episodes.jsonl")
    jsonschema.validate(episode, schema)
    assert episode["id"] == recorded.episode_id
    # the rules' own decision when the outcomes settled, then the two the fixture wrote
    assert [c["tier"] for c in episode["tier_history"]][-2:] == ["silver", "gold"]
    by_id = {p["id"]: p for p in episode["proposals"]}
    assert by_id[ids["undone.py"]]["tier"]["tier"] == "undone"
    assert by_id[ids["edited.py"]]["hunk_context"][0]["final"] == EDITED_BODY
    assert by_id[ids["kept.py"]]["checkpoints"], "the checkpoints go with the episode"
    assert load(out / "episodes.jsonl").num_rows == 1

    # Agent Trace: the agent's lines still in place, the edited file marked mixed
    (trace,) = rows(out / "agent-trace.jsonl")
    files = {f["path"]: f["conversations"][0] for f in trace["files"]}
    assert files["kept.py"]["ranges"][0]["start_line"] == 2
    assert files["kept.py"]["ranges"][0]["end_line"] == 5
    assert files["kept.py"]["contributor"] == {"type": "ai", "model_id": "test-model"}
    assert files["edited.py"]["contributor"]["type"] == "mixed"
    load(out / "agent-trace.jsonl")

    assert sheet["rows"]["dpo"] == 2 and sheet["rows"]["kto"] == 5
    assert sheet["examples_by_language"] == {"Python": 5}
    assert sheet["examples_by_agent"] == {"claude-code": 5}
    assert sheet["episodes_by_tier"] == {"gold": 1}
    assert sheet["tier_rules_versions"] == {"1": 6}  # 5 proposals, 1 episode
    assert "| gold | 1 |" in (out / "datasheet.md").read_text()


def test_redacted_level_carries_no_secret(recorded: Recorded, tmp_path: Path) -> None:
    out = tmp_path / "redacted"
    export(recorded, out, "--format", ALL)  # redacted is the default
    text = "".join(p.read_text() for p in out.glob("*.jsonl"))
    assert SECRET not in text
    assert str(recorded.workspace) not in text
    (episode,) = rows(out / "episodes.jsonl")
    assert episode["level"] == "redacted"
    assert "<SECRET:" in episode["prompt"]
    # the tiers survive the projection; the code still trains
    assert episode["tier"]["tier"] == "gold"
    assert {p["language"] for p in episode["proposals"]} == {"Python"}  # as at the full level
    assert load(out / "dpo.jsonl").num_rows == 2


def test_metrics_level_has_tiers_and_no_code(recorded: Recorded, tmp_path: Path) -> None:
    out = tmp_path / "metrics"
    export(recorded, out, "--format", "episodes", "--level", "metrics")
    (episode,) = rows(out / "episodes.jsonl")
    assert episode["prompt"] is None
    assert all("hunks" not in p for p in episode["proposals"])
    assert {p["tier"]["tier"] for p in episode["proposals"]} == {
        "gold",
        "silver",
        "edited",
        "undone",
        "rejected",
    }
    assert AGENT_BODY.strip() not in (out / "episodes.jsonl").read_text()

    refused = recorded.run(
        "export", "--out", str(tmp_path / "x"), "--format", "sft", "--level", "metrics"
    )
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "metrics level carries none" in refused.stderr


def test_tiers_split_and_dedupe(recorded: Recorded, tmp_path: Path) -> None:
    out = tmp_path / "gold"
    sheet = export(recorded, out, "--format", "kto,episodes", "--tiers", "gold", "--level", "full")
    (only,) = rows(out / "kto.jsonl")
    assert only["id"] == f"{recorded.proposals['kept.py']}:0" and only["label"] is True
    assert sheet["rows"] == {"episodes": 1, "kto": 1}

    none = export(recorded, tmp_path / "debt", "--format", "kto,episodes", "--tiers", "debt")
    assert none["rows"] == {} and none["episodes"] == 1

    mine = export(recorded, tmp_path / "ws", "--format", "episodes", "--workspace",
                  str(recorded.workspace), "--since", "1d")  # fmt: skip
    assert mine["rows"] == {"episodes": 1}
    elsewhere = export(recorded, tmp_path / "none", "--format", "episodes", "--workspace", "/x")
    assert elsewhere["episodes"] == 0 and elsewhere["rows"] == {}

    split = tmp_path / "split"
    first = export(recorded, split, "--format", "kto", "--split", "50/50", "--level", "full")
    (key,) = first["rows"]
    assert key in ("kto.train", "kto.eval")  # one episode: all of it on one side
    again = export(recorded, tmp_path / "split2", "--format", "kto", "--split", "0.5")
    assert list(again["rows"]) == [key]

    # the same kept text twice in an episode is one row with --dedupe
    deduped = export(recorded, tmp_path / "dd", "--format", "sft", "--dedupe", "--level", "full")
    assert deduped["duplicates_dropped"] == 0 and deduped["rows"] == {"sft": 3}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "parquet"], "unknown format 'parquet'"),
        (["--format", "sft", "--tiers", "platinum"], "unknown tier 'platinum'"),
        (["--format", "sft", "--split", "1.5"], "--split wants an eval share"),
        (["--format", "sft", "--since", "yesterdayish"], "not a duration or date"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    recorded: Recorded, tmp_path: Path, args: list[str], message: str
) -> None:
    proc = recorded.run("export", "--out", str(tmp_path / "o"), *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and message in proc.stderr
    assert not (tmp_path / "o").exists()
