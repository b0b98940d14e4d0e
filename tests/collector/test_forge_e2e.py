"""The forge's verdict end to end: six members record agent edits through the real CLI, commit
them with real git and upload them with the real `capture sync now` to a real collector on
loopback; the collector receives signed GitHub deliveries (the community's example payloads,
retargeted) for a pull request holding one member's lines, a review round rewriting one of its
two files, CI green and the merge, and for a second member's pull request merged untouched; the
team export (`capture collector export`) shows the first episode `edited` for the reason
`review`, with the changed share computed by hand, and the second still `gold`.

The late git pass needs 14 days to call lines gold, so each member's late signals (the commit
that carried the lines, read from the real repository) and gold tiers are written into the
member's store directly, as the tiers end-to-end test does for its debt."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from capture.paths import resolve_paths
from capture.store.database import Store
from capture.store.late_signal_rows import write_late_signals
from capture.store.tier_rows import record_tier
from capture.tiers import Tier, TierDecision
from capture.tiers.late_signals import LateSignals
from tests.collector.conftest import StartCollector
from tests.conftest import capture_env
from tests.support.collector_support import make_token
from tests.support.export_support import AGENT_BODY, ORIGINAL, _propose
from tests.support.forge_support import example, make_secret, post_github, stored_deliveries

TEAM = "forge-web"
REPO = "acme/shop"
OTHER_BODY = "    for x in items:\n        assert x >= 0\n    return items\n"
#: the agent's lines per file, as the late pass counts them (non-blank)
LINES = {"kept.py": 4, "other.py": 3}


def _capture(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capture", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=capture_env(home),
        timeout=300,
    )


def _git(ws: Path, *args: str) -> str:
    who = {"NAME": "m", "EMAIL": "m@example.com"}
    env = {
        **os.environ,
        **{f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER") for k, v in who.items()},
    }
    done = subprocess.run(
        ["git", "-C", str(ws), *args], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.strip()


def _record(root: Path, files: tuple[str, ...]) -> tuple[Path, Path, str]:
    """One member's agent turn over `files`, settled through `capture observe`, committed with
    git; its late signals and gold tiers written as the late pass and tier rules would."""
    home, ws = root / "home", root / "ws"
    ws.mkdir(parents=True)
    _git(ws, "init", "-q")
    bodies = {"kept.py": AGENT_BODY, "other.py": OTHER_BODY}
    ids = {}
    for name in files:
        (ws / name).write_text(ORIGINAL.replace("    return 0\n", bodies[name]))
        ids[name] = _propose(home, ws, name, bodies[name], turn_id=f"t-{root.name}")
    deadline = time.time() + 60
    while True:
        time.sleep(0.4)
        assert _capture(home, "observe", cwd=ws).returncode == 0
        episodes = json.loads(_capture(home, "episodes", "--json", cwd=ws).stdout)
        if all(p["tier"] is not None for e in episodes for p in e["proposals"]):
            break
        assert time.time() < deadline, "the proposals were never tiered"
    _git(ws, "add", *files)
    _git(ws, "commit", "-q", "-m", "the agent's change")
    sha = _git(ws, "rev-parse", "HEAD")
    now = time.time()
    store = Store.open(resolve_paths({"CAPTURE_HOME": str(home)}).db)
    with store.transaction() as conn:
        write_late_signals(
            conn,
            [
                (pid, LateSignals(measured_at=now, lines=LINES[name], committed=LINES[name],
                                  commit=sha, committed_at=now, churn_14d=0.0, days_observed=15))
                for name, pid in ids.items()
            ],
        )  # fmt: skip
        gold = TierDecision(Tier.GOLD, ("kept",), 1)
        for pid in ids.values():
            record_tier(conn, "proposal", pid, gold, now)
        for e in episodes:
            record_tier(conn, "episode", e["id"], gold, now)
    store.close()
    return home, ws, sha


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Path, str]]:
    base = tmp_path_factory.mktemp("forge-members")
    out = [_record(base / "m0", ("kept.py", "other.py"))]
    out += [_record(base / f"m{i}", ("kept.py",)) for i in range(1, 6)]
    return out


def _pr(number: int, head: str, action: str, merged: bool = False) -> dict[str, Any]:
    p = copy.deepcopy(
        example(f"github/pull_request.{'closed' if action == 'closed' else 'opened'}")
    )
    p["action"], p["number"] = action, number
    p["repository"]["full_name"] = REPO
    pr = p["pull_request"]
    pr["number"], pr["merged"] = number, merged
    pr["head"]["sha"], pr["head"]["ref"] = head, f"agent-{number}"
    pr["additions"], pr["deletions"] = 7, 2
    return p


def _push(number: int, sha: str, files: list[str]) -> dict[str, Any]:
    p = copy.deepcopy(example("github/push"))
    p["repository"]["full_name"] = REPO
    p["ref"], p["after"] = f"refs/heads/agent-{number}", sha
    p["commits"] = [{"id": sha, "added": [], "removed": [], "modified": files,
                     "timestamp": "2026-12-01T10:00:00Z"}]  # fmt: skip
    return p


def _review(number: int, state: str, commit: str) -> dict[str, Any]:
    p = copy.deepcopy(example("github/pull_request_review.submitted"))
    p["repository"]["full_name"] = REPO
    p["pull_request"]["number"] = number
    p["review"].update(state=state, commit_id=commit, body="Please tighten the check.")
    return p


def _check(head: str) -> dict[str, Any]:
    p = copy.deepcopy(example("github/check_suite.completed"))
    p["repository"]["full_name"] = REPO
    p["check_suite"].update(head_sha=head, status="completed", conclusion="success")
    return p


def test_the_export_shows_what_review_merge_and_ci_made_of_the_agents_lines(
    members: list[tuple[Path, Path, str]],
    db_url: str,
    start_collector: StartCollector,
    tmp_path: Path,
) -> None:
    collector = start_collector(db_url)
    ingest = make_token(db_url, TEAM, "ingest")
    for i, (recorded, ws, _) in enumerate(members):
        home = tmp_path / f"member{i}"
        shutil.copytree(recorded, home)
        enable = _capture(
            home, "sync", "enable", "--url", collector.url, "--token", ingest,
            "--level", "redacted", "--workspace", str(ws),
        )  # fmt: skip
        assert enable.returncode == 0, enable.stderr
        sent = _capture(home, "sync", "now", cwd=ws)
        assert sent.returncode == 0, sent.stderr

    secret = make_secret(db_url, TEAM)
    c1, c3 = members[0][2], members[1][2]
    c2 = "f" * 40  # the reviewer's commit: it rewrites other.py
    deliveries = [
        ("push", _push(1, c1, ["kept.py", "other.py"]), "p1"),
        ("pull_request", _pr(1, c1, "opened"), "o1"),
        ("pull_request_review", _review(1, "changes_requested", c1), "r1"),
        ("push", _push(1, c2, ["other.py"]), "p2"),
        ("pull_request", _pr(1, c2, "synchronize"), "s1"),
        ("check_suite", _check(c2), "c1"),
        ("pull_request_review", _review(1, "approved", c2), "r2"),
        ("pull_request", _pr(1, c2, "closed", merged=True), "m1"),
        ("push", _push(2, c3, ["kept.py"]), "p3"),
        ("pull_request", _pr(2, c3, "opened"), "o2"),
        ("check_suite", _check(c3), "c2"),
        ("pull_request", _pr(2, c3, "closed", merged=True), "m2"),
    ]
    with httpx.Client(timeout=30) as client:
        for event, payload, delivery in deliveries:
            r = post_github(client, collector.url, TEAM, secret, event, payload, delivery)
            assert r.status_code == 200, r.text
        replay = post_github(client, collector.url, TEAM, secret, *deliveries[4][:2], "s1")
        bad = post_github(client, collector.url, TEAM, "nope", "push", _push(1, c2, []), "x")
        unknown = post_github(client, collector.url, TEAM, secret, "issues", {"action": "x"})
    assert replay.json()["status"] == "duplicate"
    assert (bad.status_code, unknown.status_code) == (401, 202)
    assert len(stored_deliveries(db_url, TEAM)) == len(deliveries)
    # review bodies are not kept
    assert "tighten" not in json.dumps([d.facts for d in stored_deliveries(db_url, TEAM)])

    out = tmp_path / "export"
    proc = _capture(
        tmp_path / "team", "collector", "export", "--db", db_url, "--team", TEAM,
        "--out", str(out), "--format", "episodes", "--min-contributors", "2",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(lines) == 6
    by_commit = {e["proposals"][0]["late_signals"]["commit"]: e for e in lines if e["proposals"]}
    reviewed, untouched = by_commit[c1], by_commit[c3]
    # by hand: other.py's 3 of the 7 committed lines were rewritten in review
    assert reviewed["forge"]["changed_in_review"] == round(3 / 7, 4)
    assert reviewed["tier"]["tier"] == "edited" and reviewed["tier"]["reasons"] == ["review"]
    assert reviewed["forge"]["merged"] is True and reviewed["forge"]["ci"] == "success"
    assert reviewed["forge"]["review_state"] == "approved"
    assert reviewed["forge"]["review_rounds"] == 2
    tiers = {p["file"]: p["tier"] for p in reviewed["proposals"]}
    assert tiers["kept.py"]["tier"] == "gold"
    assert (tiers["other.py"]["tier"], tiers["other.py"]["reasons"]) == ("edited", ["review"])
    assert untouched["tier"]["tier"] == "gold" and untouched["forge"]["changed_in_review"] == 0.0
    others = [e for e in lines if e is not reviewed and e is not untouched]
    assert all("forge" not in e and e["tier"]["tier"] == "gold" for e in others)

    # the team's figures: two contributors' episodes reached a pull request, both merged
    figures = json.loads((out / "forge.json").read_text())
    total = figures["total"]
    assert (total["contributors"], total["in_pr"], total["merged"]) == (2, 2, 2)
    assert total["merge_retention"] == round(((1 - 3 / 7) + 1.0) / 2, 4)
    assert total["changed_in_review_share"] == 0.5
    assert total["review_rounds_mean"] == 1.5
