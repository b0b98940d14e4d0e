"""The forge's decisions without processes: signatures, what a delivery keeps, linking a team's
deliveries to an episode's committed lines, and the verdict in the tiers."""

from __future__ import annotations

import hashlib
import hmac
import json
from itertools import count
from typing import Any

from capture.tiers.forge import ForgeFacts, apply_forge
from capture.tiers.model import Tier, TierDecision
from sync.collector.forge import Delivery, github_facts, gitlab_facts, verify_github, verify_gitlab
from sync.collector.forge_export import with_forge
from sync.collector.forge_link import EpisodeLines, build_index, verdict
from sync.collector.forge_report import ForgeTally, forge_figures
from tests.support.forge_support import example

REPO = "acme/app"
_ids = count()


def sig(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_github_signature_is_the_bodys_hmac_under_the_secret() -> None:
    body = json.dumps(example("github/push")).encode()
    assert verify_github("s3cret", body, sig("s3cret", body))
    assert not verify_github("s3cret", body + b" ", sig("s3cret", body))
    assert not verify_github("other", body, sig("s3cret", body))
    assert not verify_github("s3cret", body, None)
    assert not verify_github("s3cret", body, sig("s3cret", body).replace("sha256=", "sha1="))
    assert verify_gitlab("tok", "tok") and not verify_gitlab("tok", "tok2")
    assert not verify_gitlab("tok", None)


def test_kept_facts_of_the_examples_and_no_comment_bodies() -> None:
    pr = github_facts("pull_request", example("github/pull_request.closed"))
    assert pr is not None and pr["kind"] == "pr" and pr["number"] == 2 and pr["merged"] is False
    comment_payload = example("github/pull_request_review_comment.created")
    comment = github_facts("pull_request_review_comment", comment_payload)
    assert comment is not None and comment["path"] == "README.md"
    assert comment_payload["comment"]["body"] not in json.dumps(comment)
    assert github_facts("star", {"action": "created"}) is None
    mr = gitlab_facts("Merge Request Hook", example("gitlab/merge_request.merged"))
    assert mr is not None and mr["merged"] and mr["head_ref"] == "ms-viewport"
    pipeline = gitlab_facts("Pipeline Hook", example("gitlab/pipeline.success"))
    assert pipeline is not None and pipeline["conclusion"] == "success"
    assert gitlab_facts("Issue Hook", {}) is None


def d(at: float, facts: dict[str, Any]) -> Delivery:
    return Delivery("github", f"d{next(_ids)}", str(facts["kind"]), at, {"repo": REPO, **facts})


def pr(at: float, number: int, head: str, action: str, **extra: Any) -> Delivery:
    facts = {"kind": "pr", "number": number, "head_sha": head, "head_ref": f"b{number}"}
    return d(at, {**facts, "action": action, "additions": 100, "deletions": 20, **extra})


def push(at: float, number: int, sha: str, *files: str) -> Delivery:
    commits = [{"sha": sha, "files": list(files)}]
    return d(at, {"kind": "push", "ref": f"refs/heads/b{number}", "after": sha, "commits": commits})


def review(at: float, number: int, state: str, commit: str, body: bool = False) -> Delivery:
    return d(at, {"kind": "review", "number": number, "state": state, "commit": commit,
                  "has_body": body})  # fmt: skip


def ci(at: float, head: str, conclusion: str | None, name: str = "tests") -> Delivery:
    return d(at, {"kind": "ci", "head_sha": head, "name": name, "status": "completed",
                  "conclusion": conclusion})  # fmt: skip


def reviewed_pr() -> list[Delivery]:
    """PR 7: the agent's commit C1 (a.py, b.py), changes requested, C2 rewrites b.py, CI green
    at C2, approved, merged."""
    return [
        push(100, 7, "C1", "src/a.py", "src/b.py"),
        pr(110, 7, "C1", "opened", created_at=110.0),
        review(200, 7, "changes_requested", "C1", body=True),
        d(210, {"kind": "comment", "number": 7, "path": "src/b.py", "line": 3, "commit": "C1"}),
        push(300, 7, "C2", "src/b.py"),
        pr(301, 7, "C2", "synchronize"),
        ci(310, "C2", "failure"),
        ci(320, "C2", "success"),  # the rerun passed
        review(400, 7, "approved", "C2"),
        pr(500, 7, "C2", "closed", merged=True, closed_at=500.0),
    ]


def test_a_review_that_rewrote_a_file_changes_that_share_of_the_lines() -> None:
    index = build_index(reviewed_pr())
    lines = [EpisodeLines("C1", "src/a.py", 6), EpisodeLines("C1", "src/b.py", 4)]
    v = verdict(index, lines, full=True)
    assert v.in_pr and v.merged
    assert v.changed_in_review == 0.4  # by hand: b.py's 4 of 10 lines
    assert v.time_to_merge_s == 400.0  # first revision holding C1 (100) to the merge (500)
    assert (v.review_state, v.review_rounds, v.review_comments) == ("approved", 2, 1)
    assert v.ci == "success"
    assert not v.quick_approval
    # below the full level the directories are hashed: the file's name matches
    hashed = [EpisodeLines("C1", "9f3e/a.py", 6), EpisodeLines("C1", "9f3e/b.py", 4)]
    assert verdict(index, hashed, full=False).changed_in_review == 0.4


def test_lines_in_no_pull_request_have_no_verdict() -> None:
    index = build_index(reviewed_pr())
    assert not verdict(index, [EpisodeLines("C9", "src/a.py", 3)], full=True).in_pr
    assert not verdict(index, [], full=True).in_pr


def test_untouched_closed_and_quick() -> None:
    deliveries = [
        push(100, 8, "C3", "src/c.py"),
        pr(101, 8, "C3", "opened"),
        review(130, 8, "approved", "C3"),
        ci(140, "C3", "failure"),
        pr(200, 8, "C3", "closed", merged=True),
        push(100, 9, "C4", "src/d.py"),
        pr(101, 9, "C4", "opened"),
        pr(150, 9, "C4", "closed", merged=False, closed_at=150.0),
    ]
    index = build_index(deliveries)
    merged = verdict(index, [EpisodeLines("C3", "src/c.py", 5)], full=True)
    assert merged.merged and merged.changed_in_review == 0.0
    assert merged.quick_approval  # approved 29 s after its revision, no body, 120 lines
    assert merged.ci == "failure"
    closed = verdict(index, [EpisodeLines("C4", "src/d.py", 5)], full=True)
    assert closed.closed_unmerged and not closed.merged


def gold() -> TierDecision:
    return TierDecision(Tier.GOLD, ("kept",), 1)


def test_the_forge_lowers_tiers_never_raises_them() -> None:
    assert apply_forge(gold(), ForgeFacts(in_pr=False)) == gold()
    merged = ForgeFacts(in_pr=True, merged=True, changed_in_review=0.0, ci="success")
    assert apply_forge(gold(), merged) == gold()
    edited = apply_forge(gold(), ForgeFacts(in_pr=True, merged=True, changed_in_review=0.4))
    assert edited is not None and (edited.tier, edited.reasons) == (Tier.EDITED, ("review",))
    closed = apply_forge(gold(), ForgeFacts(in_pr=True, closed_unmerged=True))
    assert closed is not None and closed.tier is Tier.REJECTED
    red = apply_forge(
        gold(), ForgeFacts(in_pr=True, merged=True, changed_in_review=0, ci="failure")
    )
    assert red is not None and red.tier is Tier.SILVER
    open_pr = apply_forge(gold(), ForgeFacts(in_pr=True))
    assert open_pr is not None and open_pr.tier is Tier.SILVER
    debt = TierDecision(Tier.DEBT, ("reverted",), 1)
    assert apply_forge(debt, ForgeFacts(in_pr=True, merged=True, changed_in_review=1.0)) == debt


def test_the_export_carries_the_verdict_and_the_tier_it_left() -> None:
    def episode(eid: str, commit: str, *files: tuple[str, int]) -> dict[str, Any]:
        tier = {"tier": "gold", "reasons": ["kept"], "rules_version": 1, "decided_at": "t"}
        proposals = [
            {"id": f, "file": f, "tier": dict(tier),
             "late_signals": {"commit": commit, "committed_lines": n}}
            for f, n in files
        ]  # fmt: skip
        return {"id": eid, "level": "full", "proposals": proposals, "tier": tier}

    index = build_index([*reviewed_pr(), push(90, 8, "C3", "x.py"), pr(95, 8, "C3", "opened"),
                         pr(99, 8, "C3", "closed", merged=True)])  # fmt: skip
    out = list(
        with_forge(
            [
                episode("e1", "C1", ("src/a.py", 6), ("src/b.py", 4)),
                episode("e2", "C3", ("x.py", 2)),
                episode("e3", "C9", ("y.py", 2)),
            ],
            index,
        )
    )
    assert out[0]["tier"]["tier"] == "edited" and out[0]["tier"]["reasons"] == ["review"]
    assert out[0]["forge"]["changed_in_review"] == 0.4
    assert out[0]["forge"]["tier_before"]["tier"] == "gold"
    # the training rows come from the proposals: the one review rewrote is edited, the other
    # keeps its gold
    kept, rewritten = out[0]["proposals"]
    assert kept["tier"]["tier"] == "gold"
    assert (rewritten["tier"]["tier"], rewritten["tier"]["reasons"]) == ("edited", ["review"])
    assert list(out[0]["forge"]["proposal_tiers_before"]) == ["src/b.py"]
    assert out[1]["tier"]["tier"] == "gold" and out[1]["forge"]["merged"] is True
    assert "forge" not in out[2]


def test_team_figures_hide_groups_of_fewer_than_k_contributors() -> None:
    tally = ForgeTally()
    for i in range(5):
        forge = {"merged": True, "changed_in_review": 0.5 if i == 0 else 0.0, "review_rounds": 2}
        tally.add({"agent": "claude-code", "model": "opus", "forge": forge,
                   "collector": {"contributor": f"c{i}"}})  # fmt: skip
    quick = {"merged": False, "quick_approval": True}
    tally.add({"agent": "codex", "model": "gpt-5", "forge": quick,
               "collector": {"contributor": "c9"}})  # fmt: skip
    tally.add({"agent": "codex", "model": "gpt-5", "collector": {"contributor": "c8"}})
    figures = forge_figures(tally, "t", 5)
    claude, codex = figures["by_agent"]
    assert claude["merge_retention"] == 0.9 and claude["changed_in_review_share"] == 0.2
    assert claude["review_rounds_mean"] == 2.0 and claude["contributors"] == 5
    assert codex == {"key": "codex", "suppressed": True, "reason": "fewer than 5 contributors"}
    assert figures["total"]["in_pr"] == 6 and figures["total"]["quick_approvals"] == 1
