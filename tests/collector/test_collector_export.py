"""`capture collector export`: episodes recorded on a machine, uploaded by the real `capture sync`
to a real collector, exported by the team in the training formats and loaded with `datasets`.

Uploads carry no context around the edits, but they carry each proposal's and the episode's
tier: the formats that need a tier have their rows, `--tiers` selects by the uploaded tiers, and
the canonical export carries every uploaded episode with its outcomes and tiers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.collector.conftest import StartCollector
from tests.conftest import capture_env, require_train_extra
from tests.support.collector_support import make_token
from tests.support.export_support import SECRET, record_scenario

require_train_extra("datasets")


def _capture(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capture", *args],
        capture_output=True,
        text=True,
        env=capture_env(home, HF_HUB_OFFLINE="1"),
        timeout=300,
    )


def test_a_team_exports_what_its_members_uploaded(
    sqlite_url: str, start_collector: StartCollector, tmp_path: Path
) -> None:
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    recorded = record_scenario(tmp_path / "member")
    collector = start_collector(sqlite_url)
    token = make_token(sqlite_url, "web", "ingest")
    enable = recorded.run(
        "sync", "enable", "--url", collector.url, "--token", token, "--level", "redacted",
        "--workspace", str(recorded.workspace),
    )  # fmt: skip
    assert enable.returncode == 0, enable.stderr
    sent = recorded.run("sync", "now")
    assert sent.returncode == 0, sent.stderr

    out = tmp_path / "team-export"
    team_home = tmp_path / "team"
    proc = _capture(
        team_home, "collector", "export", "--db", sqlite_url, "--team", "web", "--out", str(out),
        "--format", "episodes,kto,sft-messages,dpo",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    sheet = json.loads((out / "datasheet.json").read_text())
    assert sheet["episodes"] == 1 and sheet["options"]["team"] == "web"

    from datasets import load_dataset

    episodes = load_dataset(
        "json",
        data_files=str(out / "episodes.jsonl"),
        split="train",
        cache_dir=str(tmp_path / "hf-cache"),
    )
    (episode,) = list(episodes)
    assert episode["id"] == recorded.episode_id and episode["level"] == "redacted"
    assert episode["collector"]["revision"] >= 1
    outcomes = sorted(p["outcome"] for p in episode["proposals"])
    assert outcomes == ["edited", "kept", "kept", "rejected", "undone"]
    assert SECRET not in (out / "episodes.jsonl").read_text()
    # the team's canonical lines are the contract's export lines too
    import jsonschema

    schema = json.loads((out / "episode.schema.json").read_text())
    for line in (out / "episodes.jsonl").read_text().splitlines():
        jsonschema.validate(json.loads(line), schema)
    # the tiers went up with the episode: the datasheet counts it by its tier, and the KTO
    # rows are the tiered proposals with an agent's text (gold and silver as positives; edited,
    # undone and rejected as negatives)
    assert sheet["episodes_by_tier"] == {"gold": 1}
    assert episode["tier"]["tier"] == "gold"
    assert [d["tier"] for d in episode["tier_history"]][-2:] == ["silver", "gold"]
    kto = [json.loads(line) for line in (out / "kto.jsonl").read_text().splitlines()]
    assert sorted((r["tier"], r["label"]) for r in kto) == [
        ("edited", False), ("gold", True), ("rejected", False), ("silver", True),
        ("undone", False),
    ]  # fmt: skip

    filtered = _capture(
        team_home, "collector", "export", "--db", sqlite_url, "--team", "web",
        "--out", str(tmp_path / "gold"), "--format", "episodes", "--tiers", "gold",
    )  # fmt: skip
    assert filtered.returncode == 0, filtered.stderr
    assert json.loads((tmp_path / "gold" / "datasheet.json").read_text())["rows"] == {"episodes": 1}
    nothing = _capture(
        team_home, "collector", "export", "--db", sqlite_url, "--team", "web",
        "--out", str(tmp_path / "debt"), "--format", "episodes", "--tiers", "debt",
    )  # fmt: skip
    assert nothing.returncode == 0, nothing.stderr
    assert json.loads((tmp_path / "debt" / "datasheet.json").read_text())["rows"] == {}

    bad = _capture(
        team_home, "collector", "export", "--db", sqlite_url, "--team", "web",
        "--format", "csv",
    )  # fmt: skip
    assert bad.returncode == 2 and "unknown format 'csv'" in bad.stderr
    assert bad.stderr.strip().count("\n") == 0
