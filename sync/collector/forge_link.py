"""Linking a team's forge deliveries to its episodes, without I/O: which pull request holds an
episode's committed lines, and what the review, the merge and CI made of them.

An episode names the commit that first held each proposal's lines (`late_signals.commit`, at the
redacted and full levels; the metrics level carries a flag only, so its episodes link to
nothing). A pull request's revisions are its heads, in the order the forge announced them: the
`pull_request` (GitLab: merge request) deliveries' head SHAs and the `push` deliveries to its
source branch, each push one revision with the commits it carried.

- The commit is in the pull request when a revision carried it or was headed by it.
- `changed_in_review`: of the agent's committed lines, the share in files that a commit pushed
  to the pull request after the first revision holding the lines touched, before the merge.
  Pushes list files, not lines, so this is an upper bound at file granularity: a review commit
  that changes another part of the same file counts the agent's lines as changed. A file is
  matched by its path; where the upload hashed its directories (below the full level), by its
  name alone.
- `review_comments`: line comments on the files holding the agent's lines, made at or after the
  first revision holding them (their bodies are never stored).
- `ci`: the conclusion at the pull request's final head (the last completed run wins per check;
  any failure is `failure`).
- A quick approval: an approval with no body, within `QUICK_SECONDS` of the revision it
  approved, on a diff of at least `LARGE_DIFF` changed lines, with no line comment.

Times are when the collector received each delivery (the forges send them as things happen);
the payloads' own times differ between forges and events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sync.collector.forge import Delivery

__all__ = [
    "LARGE_DIFF",
    "QUICK_SECONDS",
    "ForgeIndex",
    "ForgeVerdict",
    "PullRequest",
    "build_index",
    "episode_lines",
    "verdict",
]

QUICK_SECONDS = 60.0
LARGE_DIFF = 100

_FAILED = {"failure", "timed_out", "cancelled", "action_required", "startup_failure"}


@dataclass(slots=True)
class Revision:
    at: float
    head: str | None
    commits: list[tuple[str, list[str]]] = field(default_factory=list)  # (sha, files)


@dataclass(slots=True)
class PullRequest:
    repo: str
    number: int
    head_ref: str | None = None
    created_at: float | None = None
    merged: bool = False
    merged_at: float | None = None
    closed_at: float | None = None
    size: int | None = None  # lines added and deleted
    revisions: list[Revision] = field(default_factory=list)
    reviews: list[tuple[float, str, str | None, bool]] = field(default_factory=list)
    comments: list[tuple[float, str | None, int | None]] = field(default_factory=list)

    @property
    def final_head(self) -> str | None:
        heads = [r.head for r in self.revisions if r.head]
        return heads[-1] if heads else None


@dataclass(frozen=True, slots=True)
class ForgeIndex:
    pulls: dict[tuple[str, int], PullRequest]
    by_commit: dict[str, list[tuple[str, int]]]
    ci: dict[str, str]  # head SHA -> success | failure | pending


@dataclass(frozen=True, slots=True)
class ForgeVerdict:
    """What the forge says of one episode's committed lines (None: the forge did not say)."""

    in_pr: bool
    merged: bool | None = None
    closed_unmerged: bool = False
    time_to_merge_s: float | None = None
    review_state: str | None = None
    review_rounds: int | None = None
    review_comments: int | None = None
    changed_in_review: float | None = None
    ci: str | None = None
    quick_approval: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "in_pr": self.in_pr,
            "merged": self.merged,
            "closed_unmerged": self.closed_unmerged,
            "time_to_merge_s": self.time_to_merge_s,
            "review_state": self.review_state,
            "review_rounds": self.review_rounds,
            "review_comments": self.review_comments,
            "changed_in_review": self.changed_in_review,
            "ci": self.ci,
            "quick_approval": self.quick_approval,
        }


def _pull(pulls: dict[tuple[str, int], PullRequest], facts: Mapping[str, Any]) -> PullRequest:
    key = (str(facts.get("repo") or ""), int(facts.get("number") or 0))
    if key not in pulls:
        pulls[key] = PullRequest(*key)
    return pulls[key]


def _ci_state(results: Mapping[str, str | None]) -> str:
    conclusions = set(results.values())
    if conclusions & _FAILED:
        return "failure"
    if None in conclusions:
        return "pending"
    return "success"


def build_index(deliveries: Iterable[Delivery]) -> ForgeIndex:
    """The team's pull requests, their revisions, reviews and comments, and CI per head."""
    pulls: dict[tuple[str, int], PullRequest] = {}
    pushes: list[tuple[float, Mapping[str, Any]]] = []
    checks: dict[str, dict[str, str | None]] = {}
    for d in sorted(deliveries, key=lambda d: d.received_at):
        f = d.facts
        kind = f.get("kind")
        if kind == "pr" and f.get("number"):
            pr = _pull(pulls, f)
            pr.head_ref = f.get("head_ref") or pr.head_ref
            pr.created_at = f.get("created_at") or pr.created_at
            if f.get("additions") is not None and f.get("deletions") is not None:
                pr.size = int(f["additions"]) + int(f["deletions"])
            head = f.get("head_sha")
            if head and (not pr.revisions or pr.revisions[-1].head != head):
                pr.revisions.append(Revision(d.received_at, head))
            if f.get("merged"):
                pr.merged, pr.merged_at = True, d.received_at
            elif f.get("closed_at") and f.get("action") in ("closed", "close"):
                pr.closed_at = d.received_at
        elif kind == "review" and f.get("number") and f.get("state"):
            _pull(pulls, f).reviews.append(
                (d.received_at, f["state"], f.get("commit"), bool(f.get("has_body")))
            )
        elif kind == "comment" and f.get("number"):
            _pull(pulls, f).comments.append((d.received_at, f.get("path"), f.get("line")))
        elif kind == "push":
            pushes.append((d.received_at, f))
        elif kind == "ci" and f.get("head_sha"):
            # the latest delivery per check wins: a rerun that passed replaces its failure
            checks.setdefault(f["head_sha"], {})[str(f.get("name"))] = f.get("conclusion")
    _add_pushes(pulls, pushes)
    by_commit: dict[str, list[tuple[str, int]]] = {}
    for key, pr in pulls.items():
        for rev in pr.revisions:
            for sha in {rev.head, *(c for c, _ in rev.commits)} - {None}:
                by_commit.setdefault(str(sha), []).append(key)
    ci = {head: _ci_state(results) for head, results in checks.items()}
    return ForgeIndex(pulls, by_commit, ci)


def _add_pushes(
    pulls: dict[tuple[str, int], PullRequest], pushes: Sequence[tuple[float, Mapping[str, Any]]]
) -> None:
    """Each push to a pull request's source branch, before its merge, is one of its revisions
    (or fills in the one its head announced)."""
    branches: dict[tuple[str, str], list[PullRequest]] = {}
    for pr in pulls.values():
        if pr.head_ref:
            branches.setdefault((pr.repo, f"refs/heads/{pr.head_ref}"), []).append(pr)
    for at, f in pushes:
        commits = [(str(c["sha"]), list(c.get("files") or ())) for c in f.get("commits") or ()]
        for pr in branches.get((str(f.get("repo")), str(f.get("ref"))), ()):
            if pr.merged_at is not None and at > pr.merged_at:
                continue
            same = next((r for r in pr.revisions if r.head == f.get("after")), None)
            if same is not None:
                same.commits = commits
                same.at = min(same.at, at)
            else:
                pr.revisions.append(Revision(at, f.get("after"), commits))
        for pr in branches.get((str(f.get("repo")), str(f.get("ref"))), ()):
            pr.revisions.sort(key=lambda r: r.at)


@dataclass(frozen=True, slots=True)
class EpisodeLines:
    commit: str
    path: str
    lines: int


def episode_lines(episode: Mapping[str, Any]) -> list[EpisodeLines]:
    """Per proposal whose lines a commit carried: that commit, its file and how many lines."""
    out = []
    for p in episode.get("proposals") or ():
        late = p.get("late_signals") if isinstance(p, dict) else None
        if not isinstance(late, dict):
            continue
        sha, path, lines = late.get("commit"), p.get("file"), late.get("committed_lines")
        if isinstance(sha, str) and sha and isinstance(path, str) and isinstance(lines, int):
            out.append(EpisodeLines(sha, path, lines))
    return out


def _same_file(episode_path: str, forge_path: str | None, full: bool) -> bool:
    if forge_path is None:
        return False
    if full:
        return episode_path == forge_path
    return episode_path.rsplit("/", 1)[-1] == forge_path.rsplit("/", 1)[-1]


def verdict(index: ForgeIndex, lines: Sequence[EpisodeLines], full: bool) -> ForgeVerdict:
    """The forge's verdict on an episode's committed lines: the pull request that first held
    them (the earliest, when several did)."""
    if not lines:
        return ForgeVerdict(in_pr=False)
    keys = {k for line in lines for k in index.by_commit.get(line.commit, ())}
    if not keys:
        return ForgeVerdict(in_pr=False)
    commits = {line.commit for line in lines}
    pr = min((index.pulls[k] for k in keys), key=lambda p: (p.created_at or 0.0, p.number))
    first = next(
        i
        for i, r in enumerate(pr.revisions)
        if r.head in commits or any(c in commits for c, _ in r.commits)
    )
    start = pr.revisions[first].at
    later = pr.revisions[first + 1 :]
    touched = [f for r in later for c, files in r.commits if c not in commits for f in files]
    total = sum(line.lines for line in lines)
    changed = sum(
        line.lines for line in lines if any(_same_file(line.path, f, full) for f in touched)
    )
    paths = [line.path for line in lines]
    comments = sum(
        1
        for at, path, _ in pr.comments
        if at >= start and any(_same_file(p, path, full) for p in paths)
    )
    reviews = [r for r in pr.reviews if r[1] != "dismissed"]
    final = pr.final_head
    return ForgeVerdict(
        in_pr=True,
        merged=pr.merged,
        closed_unmerged=not pr.merged and pr.closed_at is not None,
        time_to_merge_s=(pr.merged_at - start) if pr.merged and pr.merged_at else None,
        review_state=reviews[-1][1] if reviews else None,
        review_rounds=1 + len(later),
        review_comments=comments,
        changed_in_review=round(changed / total, 4) if total else None,
        ci=index.ci.get(final) if final else None,
        quick_approval=_quick(pr, comments),
    )


def _quick(pr: PullRequest, comments: int) -> bool:
    if comments or pr.size is None or pr.size < LARGE_DIFF:
        return False
    shown = {r.head: r.at for r in pr.revisions if r.head}
    for at, state, commit, has_body in pr.reviews:
        since = shown.get(commit) if commit else None
        fresh = since is not None and 0 <= at - since <= QUICK_SECONDS
        if state == "approved" and not has_body and fresh:
            return True
    return False
