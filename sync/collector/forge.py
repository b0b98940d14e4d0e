"""A forge's webhook deliveries, decided without I/O: is the signature right, which events
are kept, and what of each is stored.

GitHub signs the body with the team's secret (`X-Hub-Signature-256: sha256=<hmac>`); GitLab
sends the secret itself as `X-Gitlab-Token`. One secret per team serves both.

What is stored of a delivery is a small record of facts (`facts`), never the payload: pull
requests by repository, number, head and state; reviews by state and commit; line comments by
path, line and commit (never their bodies: the collector cannot tell at intake whether a comment
is on an agent's line, so it keeps none); CI results by head and conclusion; pushes by the
commits they carried and the files those touched. Anything else in the payload is dropped.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = [
    "GITHUB_EVENTS",
    "GITLAB_EVENTS",
    "Delivery",
    "github_facts",
    "gitlab_facts",
    "new_secret",
    "verify_github",
    "verify_gitlab",
]

#: The GitHub events kept (`X-GitHub-Event`); any other is acknowledged and dropped.
GITHUB_EVENTS = frozenset(
    {
        "pull_request",
        "pull_request_review",
        "pull_request_review_comment",
        "check_suite",
        "check_run",
        "workflow_run",
        "push",
    }
)
#: The GitLab events kept (`X-Gitlab-Event`).
GITLAB_EVENTS = frozenset({"Merge Request Hook", "Note Hook", "Pipeline Hook", "Push Hook"})

_REVIEW_STATES = {"approved", "changes_requested", "commented", "dismissed"}


@dataclass(frozen=True, slots=True)
class Delivery:
    """One delivery as stored: unique per (team, source, delivery id)."""

    source: str  # github | gitlab
    delivery_id: str
    event: str
    received_at: float
    facts: dict[str, Any]


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def verify_github(secret: str, body: bytes, signature: str | None) -> bool:
    if not signature or not signature.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature[len("sha256=") :].strip().lower())


def verify_gitlab(secret: str, token: str | None) -> bool:
    return token is not None and hmac.compare_digest(secret.encode(), token.encode())


def _time(text: Any) -> float | None:
    """An ISO 8601 time as the forges write it (`2019-05-15T15:20:33Z`, GitLab's
    `2013-12-03 17:23:34 UTC` too), as epoch seconds; None for anything else."""
    if not isinstance(text, str) or not text:
        return None
    cleaned = text.replace(" UTC", "+00:00").replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(cleaned)
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _files(commit: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("added", "modified", "removed"):
        out += [f for f in commit.get(key) or () if isinstance(f, str)]
    return sorted(set(out))


def _push(repo: str | None, payload: Mapping[str, Any]) -> dict[str, Any]:
    """A push, GitHub's or GitLab's (the same shape): the commits and the files they touched."""
    commits = [c for c in payload.get("commits") or () if isinstance(c, dict)]
    return {
        "kind": "push",
        "repo": repo,
        "ref": _str(payload.get("ref")),
        "before": _str(payload.get("before")),
        "after": _str(payload.get("after")),
        "commits": [
            {"sha": _str(c.get("id")), "at": _time(c.get("timestamp")), "files": _files(c)}
            for c in commits
        ],
    }


def github_facts(event: str, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The facts kept of a GitHub delivery; None when the event is not one kept."""
    if event not in GITHUB_EVENTS:
        return None
    repo = _str(_dict(payload.get("repository")).get("full_name"))
    action = _str(payload.get("action"))
    if event == "pull_request":
        pr = _dict(payload.get("pull_request"))
        head = _dict(pr.get("head"))
        return {
            "kind": "pr",
            "repo": repo,
            "number": _int(payload.get("number")) or _int(pr.get("number")),
            "action": action,
            "head_sha": _str(head.get("sha")),
            "head_ref": _str(head.get("ref")),
            "before": _str(payload.get("before")),
            "after": _str(payload.get("after")),
            "merged": pr.get("merged") is True,
            "merge_sha": _str(pr.get("merge_commit_sha")) if pr.get("merged") is True else None,
            "created_at": _time(pr.get("created_at")),
            "merged_at": _time(pr.get("merged_at")),
            "closed_at": _time(pr.get("closed_at")),
            "additions": _int(pr.get("additions")),
            "deletions": _int(pr.get("deletions")),
        }
    if event == "pull_request_review":
        review = _dict(payload.get("review"))
        state = str(review.get("state") or "").lower()
        return {
            "kind": "review",
            "repo": repo,
            "number": _int(_dict(payload.get("pull_request")).get("number")),
            "action": action,
            "state": state if state in _REVIEW_STATES else None,
            "commit": _str(review.get("commit_id")),
            "submitted_at": _time(review.get("submitted_at")),
            "has_body": bool(review.get("body")),
        }
    if event == "pull_request_review_comment":
        comment = _dict(payload.get("comment"))
        return {
            "kind": "comment",
            "repo": repo,
            "number": _int(_dict(payload.get("pull_request")).get("number")),
            "action": action,
            "path": _str(comment.get("path")),
            "line": _int(comment.get("line")) or _int(comment.get("original_line")),
            "commit": _str(comment.get("original_commit_id")) or _str(comment.get("commit_id")),
            "created_at": _time(comment.get("created_at")),
        }
    if event == "push":
        return _push(repo, payload)
    # check_suite, check_run, workflow_run: the CI result at a head
    run = _dict(payload.get(event))
    return {
        "kind": "ci",
        "repo": repo,
        "action": action,
        "name": _str(run.get("name")) or event,
        "head_sha": _str(run.get("head_sha")),
        "status": _str(run.get("status")),
        "conclusion": _str(run.get("conclusion")),
    }


def gitlab_facts(event: str, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The facts kept of a GitLab delivery, in the same shape as GitHub's; None when the event
    is not one kept."""
    if event not in GITLAB_EVENTS:
        return None
    repo = _str(_dict(payload.get("project")).get("path_with_namespace"))
    if event == "Push Hook":
        return _push(repo, payload)
    attrs = _dict(payload.get("object_attributes"))
    if event == "Merge Request Hook":
        state = _str(attrs.get("state"))
        last = _dict(attrs.get("last_commit"))
        return {
            "kind": "pr",
            "repo": repo,
            "number": _int(attrs.get("iid")),
            "action": _str(attrs.get("action")),
            "head_sha": _str(last.get("id")),
            "head_ref": _str(attrs.get("source_branch")),
            "before": _str(attrs.get("oldrev")),
            "after": _str(last.get("id")) if attrs.get("oldrev") else None,
            "merged": state == "merged",
            "merge_sha": _str(attrs.get("merge_commit_sha")),
            "created_at": _time(attrs.get("created_at")),
            "merged_at": _time(attrs.get("updated_at")) if state == "merged" else None,
            "closed_at": _time(attrs.get("updated_at")) if state in ("merged", "closed") else None,
            "additions": None,
            "deletions": None,
        }
    if event == "Note Hook":
        mr = _dict(payload.get("merge_request"))
        position = _dict(attrs.get("position"))
        return {
            "kind": "comment",
            "repo": repo,
            "number": _int(mr.get("iid")),
            "action": _str(attrs.get("noteable_type")),
            "path": _str(position.get("new_path")),
            "line": _int(position.get("new_line")),
            "commit": _str(attrs.get("commit_id")) or _str(position.get("head_sha")),
            "created_at": _time(attrs.get("created_at")),
        }
    # Pipeline Hook
    return {
        "kind": "ci",
        "repo": repo,
        "action": None,
        "name": "pipeline",
        "head_sha": _str(attrs.get("sha")),
        "status": _str(attrs.get("status")),
        "conclusion": {"success": "success", "failed": "failure", "canceled": "cancelled"}.get(
            str(attrs.get("status"))
        ),
    }
