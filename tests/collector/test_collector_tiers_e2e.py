"""Tiers from the machine to the team: episodes recorded through the real CLI (their tiers
decided by the tier rules, and the export fixture's own decisions), uploaded by the real `capture
sync now` to a real collector on loopback, shown in the team report's tier mix (a group of fewer
than 5 contributors hidden), and selected by `capture collector export --tiers`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from capture.paths import resolve_paths
from capture.store.database import Store
from capture.store.tier_rows import record_tier
from capture.tiers import Tier, TierDecision
from tests.collector.conftest import StartCollector
from tests.conftest import capture_env, require_train_extra
from tests.support.collector_support import make_token
from tests.support.export_support import (
    AGENT_BODY,
    ORIGINAL,
    RETRY_BODY,
    SECRET,
    _propose,
    record_scenario,
)

require_train_extra("datasets")

TEAM = "web"


def _capture(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capture", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=capture_env(home, HF_HUB_OFFLINE="1"),
        timeout=300,
    )


def _episodes(home: Path, ws: Path) -> list[dict[str, Any]]:
    proc = _capture(home, "episodes", "--json", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    episodes: list[dict[str, Any]] = json.loads(proc.stdout)
    return episodes


def _record_one(root: Path, agent: str) -> tuple[Path, Path]:
    """One member's kept edit, settled through `capture observe`: the tier rules decide it."""
    home, ws = root / "home", root / "ws"
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "kept.py").write_text(ORIGINAL.replace("    return 0\n", AGENT_BODY))
    _propose(home, ws, "kept.py", AGENT_BODY, agent=agent, turn_id=f"t-{root.name}")
    deadline = time.time() + 30
    while True:
        time.sleep(0.4)
        assert _capture(home, "observe", cwd=ws).returncode == 0
        episodes = _episodes(home, ws)
        if all(p["tier"] is not None for e in episodes for p in e["proposals"]):
            return home, ws
        assert time.time() < deadline, "the proposal was never tiered"


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Path]]:
    """Six members: the export scenario (one of each tier, its retry now debt: reverted) and
    four more claude-code members, all claude-code; one codex member, alone with its agent."""
    base = tmp_path_factory.mktemp("members")
    scenario = record_scenario(base / "scenario")
    store = Store.open(resolve_paths({"CAPTURE_HOME": str(scenario.home)}).db)
    with store.transaction() as conn:
        decision = TierDecision(Tier.DEBT, ("reverted",), 1)
        record_tier(conn, "proposal", scenario.proposals["retry.py"], decision, 3.0)
    store.close()
    out = [(scenario.home, scenario.workspace)]
    out += [_record_one(base / f"claude{i}", "claude-code") for i in range(4)]
    out.append(_record_one(base / "codex", "codex"))
    return out


def test_the_team_sees_the_tier_mix_and_exports_by_tier(
    members: list[tuple[Path, Path]],
    db_url: str,
    start_collector: StartCollector,
    tmp_path: Path,
) -> None:
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    collector = start_collector(db_url)
    ingest = make_token(db_url, TEAM, "ingest")
    expected: dict[str, Counter[str]] = {"claude-code": Counter(), "codex": Counter()}
    for i, (recorded_home, ws) in enumerate(members):
        # A copy per test: each backend's upload starts from a member that never synced.
        home = tmp_path / f"member{i}"
        shutil.copytree(recorded_home, home)
        for e in _episodes(home, ws):
            for p in e["proposals"]:
                expected[e["agent"]][p["tier"]["tier"]] += 1
        enable = _capture(
            home, "sync", "enable", "--url", collector.url, "--token", ingest,
            "--level", "redacted", "--workspace", str(ws),
        )  # fmt: skip
        assert enable.returncode == 0, enable.stderr
        sent = _capture(home, "sync", "now", cwd=ws)
        assert sent.returncode == 0, sent.stderr

    read = make_token(db_url, TEAM, "read")
    answer = httpx.get(
        f"{collector.url}/v1/teams/{TEAM}/report",
        headers={"Authorization": f"Bearer {read}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    report = answer.json()
    groups = {g["key"]: g for g in report["by_agent"]}
    claude, codex = groups["claude-code"], groups["codex"]
    assert not claude["suppressed"] and claude["contributors"] == 5
    mix = {t: n for t, n in claude["tiers"]["proposals"].items() if n}
    assert mix == dict(expected["claude-code"])
    assert mix["gold"] == 1 and mix["debt"] == 1 and mix["rejected"] == 1
    passed = sum(mix.get(t, 0) for t in ("gold", "silver", "edited", "debt"))
    assert claude["tiers"]["debt_rate"]["value"] == round(1 / passed, 4)
    assert [p["window"] for p in claude["retention_curve"]][:3] == ["300ms", "600ms", "1s"]
    # the lone codex member: nothing of its group shows, not even its size
    assert codex == {"key": "codex", "suppressed": True, "reason": "fewer than 5 contributors"}
    assert report["total"]["tiers"]["tiered"] == sum(sum(c.values()) for c in expected.values())
    page = httpx.get(
        f"{collector.url}/v1/teams/{TEAM}/report",
        params={"format": "html"},
        headers={"Authorization": f"Bearer {read}"},
        timeout=30,
    ).text
    assert "<h2>Tiers by agent</h2>" in page

    out = tmp_path / "kto"
    proc = _capture(
        tmp_path / "team", "collector", "export", "--db", db_url, "--team", TEAM,
        "--out", str(out), "--format", "kto", "--tiers", "debt,gold",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    from datasets import load_dataset

    rows = list(
        load_dataset(
            "json",
            data_files=str(out / "kto.jsonl"),
            split="train",
            cache_dir=str(tmp_path / "hf-cache"),
        )
    )
    # the gold edit as a positive, the reverted retry as a negative; nothing of other tiers
    by_tier = {r["tier"]: r for r in rows}
    assert sorted(r["tier"] for r in rows) == ["debt", "gold"]
    assert by_tier["gold"]["label"] is True and by_tier["debt"]["label"] is False
    # conversational rows: the agent's text is the assistant's turn
    assert by_tier["gold"]["completion"] == [{"role": "assistant", "content": AGENT_BODY}]
    assert by_tier["debt"]["completion"] == [{"role": "assistant", "content": RETRY_BODY}]
    assert SECRET not in (out / "kto.jsonl").read_text()
    sheet = json.loads((out / "datasheet.json").read_text())
    assert sheet["rows"] == {"kto": 2}
