"""A store with one settled episode of each kind an export reads, recorded through the real
`capture propose` / `capture observe` processes, and its tiers written as the tier rules write
them (`record_tier`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from capture.paths import resolve_paths
from capture.store.database import Store
from capture.store.tier_rows import record_tier
from capture.tiers import Tier, TierDecision
from tests.conftest import capture_env

__all__ = ["AGENT_BODY", "EDITED_BODY", "RETRY_BODY", "Recorded", "record_scenario"]

ORIGINAL = "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2]))\n"
AGENT_BODY = "    result = 0\n    for item in items:\n        result += item\n    return result\n"
EDITED_BODY = "    return sum(x for x in items if x is not None)\n"
REJECTED_BODY = "    return len(items)\n"
RETRY_BODY = "    return sum(items)\n"
#: a secret the redacted level must never let out
SECRET = "AKIAIOSFODNN7EXAMPLE"


@dataclass(frozen=True)
class Recorded:
    home: Path
    workspace: Path
    #: file name -> proposal id
    proposals: dict[str, str]
    episode_id: str

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "capture", *args],
            capture_output=True,
            text=True,
            cwd=cwd or self.workspace,
            env=capture_env(self.home, HF_HUB_OFFLINE="1"),
            timeout=300,
        )


def _propose(home: Path, ws: Path, name: str, new_text: str, **fields: object) -> str:
    body = {
        "file": name,
        "old_text": "    return 0\n",
        "new_text": new_text,
        "agent": "claude-code",
        "model": "test-model",
        "session_id": "s1",
        "turn_id": "t1",
        "prompt": f"Make total() add up the items. The key is {SECRET}.",
        **fields,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "capture", "propose", "--json"],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        cwd=ws,
        env=capture_env(home),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout)["proposal"])


def record_scenario(root: Path) -> Recorded:
    home, ws = root / "home", root / "ws"
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    ids: dict[str, str] = {}
    for name in ("kept.py", "edited.py", "undone.py"):
        (ws / name).write_text(ORIGINAL.replace("    return 0\n", AGENT_BODY))
        ids[name] = _propose(home, ws, name, AGENT_BODY)
    # declined, then the agent's second try on the same code is kept: a kept sibling
    (ws / "retry.py").write_text(ORIGINAL)
    ids["rejected"] = _propose(home, ws, "retry.py", REJECTED_BODY, state="rejected")
    (ws / "retry.py").write_text(ORIGINAL.replace("    return 0\n", RETRY_BODY))
    ids["retry.py"] = _propose(home, ws, "retry.py", RETRY_BODY)

    (ws / "edited.py").write_text(ORIGINAL.replace("    return 0\n", EDITED_BODY))
    (ws / "undone.py").write_text(ORIGINAL)
    env = capture_env(home)
    deadline = time.time() + 30
    while True:
        time.sleep(0.4)
        subprocess.run(
            [sys.executable, "-m", "capture", "observe"],
            cwd=ws,
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        out = subprocess.run(
            [sys.executable, "-m", "capture", "episodes", "--json"],
            cwd=ws,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        episodes = json.loads(out)
        outcomes = {p["id"]: p["outcome"] for e in episodes for p in e["proposals"]}
        if all(o != "pending" for o in outcomes.values()):
            break
        assert time.time() < deadline, f"proposals did not settle: {outcomes}"
    assert outcomes[ids["kept.py"]] == "kept" and outcomes[ids["edited.py"]] == "edited"
    assert outcomes[ids["undone.py"]] == "undone" and outcomes[ids["rejected"]] == "rejected"
    (episode,) = episodes

    tiers = {
        "kept.py": Tier.GOLD,
        "retry.py": Tier.SILVER,
        "edited.py": Tier.EDITED,
        "undone.py": Tier.UNDONE,
        "rejected": Tier.REJECTED,
    }
    store = Store.open(resolve_paths({"CAPTURE_HOME": str(home)}).db)
    with store.transaction() as conn:
        for name, tier in tiers.items():
            record_tier(conn, "proposal", ids[name], TierDecision(tier, (f"test: {name}",), 1), 1.0)
        # then the episode was silver, then gold: two more decisions in its history
        for at, tier in ((1.0, Tier.SILVER), (2.0, Tier.GOLD)):
            record_tier(conn, "episode", episode["id"], TierDecision(tier, ("test",), 1), at)
    store.close()
    return Recorded(home, ws, ids, episode["id"])
