"""Aider's edits from git: aider commits every edit it makes, and marks those commits with a
`Co-authored-by: aider (<model>) <aider@aider.chat>` trailer (the default now), an author name
ending in " (aider)" (the older default), or an "aider: " subject prefix. Each such commit's
diff becomes proposals (one per file), judged against the work tree as it is now.

Not taken: commits only the committer name marks (aider also commits the user's own dirty files
before editing, as committer).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from capture.config import Config
from capture.errors import InputError
from capture.files import find_workspace
from capture.importers.codex_rollout import diff_hunks
from capture.importers.git_history import GitHistory
from capture.importers.judge import judge
from capture.importers.prepare import Caches, Judged, Prepared, PreparedEdit, measures_of
from capture.importers.records import History
from capture.importers.write import ImportStats, write
from capture.model import ProposalInput, State
from capture.store.database import Store

__all__ = ["AiderCommit", "file_diffs", "import_range", "is_aider_commit", "parse_log"]

AGENT = "aider"
_TRAILER = re.compile(r"(?im)^co-authored-by:\s*aider\s*(?:\(([^)]*)\))?\s*<aider@aider\.chat>")


class AiderCommit:
    __slots__ = ("sha", "author", "at", "message", "model")

    def __init__(self, sha: str, author: str, at: float, message: str) -> None:
        self.sha = sha
        self.author = author
        self.at = at
        self.message = message
        trailer = _TRAILER.search(message)
        self.model = trailer.group(1) if trailer and trailer.group(1) else None

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]


def is_aider_commit(author: str, message: str) -> bool:
    return (
        _TRAILER.search(message) is not None
        or author.rstrip().endswith("(aider)")
        or message.startswith("aider: ")
    )


def parse_log(text: str) -> list[AiderCommit]:
    """Records of `git log --format=%H%x1f%an%x1f%at%x1f%B%x1e`, aider's commits only."""
    commits = []
    for record in text.split("\x1e"):
        parts = record.strip("\n").split("\x1f")
        if len(parts) != 4 or not parts[2].isdigit():
            continue
        sha, author, at, message = parts
        if is_aider_commit(author, message):
            commits.append(AiderCommit(sha, author, float(at), message))
    return commits


def file_diffs(patch: str) -> list[tuple[str, bool, str]]:
    """(path, created, diff) per file of a `git show` patch; deletions and binary files are
    left out (nothing of them is left to follow)."""
    out: list[tuple[str, bool, str]] = []
    for block in re.split(r"(?m)^diff --git ", patch)[1:]:
        head, _, body = block.partition("\n@@")
        if "deleted file mode" in head or "Binary files" in head:
            continue
        target = re.search(r"(?m)^\+\+\+ b/(.+)$", head)
        if target is None:
            continue
        out.append((target.group(1).rstrip("\t"), "new file mode" in head, "@@" + body))
    return out


def _git(root: Path, *args: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, timeout=300, check=False
        )
    except OSError as exc:
        raise InputError(f"cannot run git: {exc}") from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return proc.stdout.decode("utf-8", "replace")


def import_range(
    store: Store, config: Config, cwd: Path, revisions: str | None, *, now: float
) -> ImportStats:
    root = find_workspace(cwd, cwd)
    if not (root / ".git").exists():
        raise InputError(f"{cwd} is not in a git work tree")
    root = root.resolve()
    spec = revisions or "HEAD"
    log = _git(root, "log", "--no-color", "--format=%H%x1f%an%x1f%at%x1f%B%x1e", spec, "--")
    commits = parse_log(log)
    stats = ImportStats()
    caches = Caches(GitHistory())
    for start in range(0, len(commits), 100):
        chunk = commits[start : start + 100]
        shown = _git(
            root,
            "show",
            "--no-color",
            "--no-renames",
            "--unified=3",
            "--format=%x00%H",
            *[c.sha for c in chunk],
        )
        patches = {}
        for block in shown.split("\x00")[1:]:
            sha, _, patch = block.partition("\n")
            patches[sha.strip()] = patch
        for commit in chunk:
            prepared = _prepare(commit, patches.get(commit.sha, ""), root, caches)
            write(store, config, prepared, now=now, stats=stats)
            stats.files += 1
    return stats


def _prepare(commit: AiderCommit, patch: str, root: Path, caches: Caches) -> Prepared:
    history = History(AGENT)
    history.cwd = str(root)
    prepared = Prepared(history)
    for relative, created, diff in file_diffs(patch):
        found = diff_hunks(diff)
        if not found:
            continue
        hunks = [h for h, _, _ in found]
        contexts = [(b, a) for _, b, a in found]
        if created:
            contexts = [("", "")] * len(hunks)
        path = str(root / relative)
        key = f"{AGENT}:{commit.sha}:{relative}"
        text = caches.text(path)
        gone = text is None and not os.path.lexists(path)
        located, measured, outcome, reason = judge(
            text, hunks, contexts, gone=gone, created_file=created
        )
        sim, ret = measures_of(measured)
        proposal = ProposalInput(
            path=path,
            workspace=str(root),
            agent=AGENT,
            hunks=hunks,
            state=State.APPLIED,
            model=commit.model,
            # one commit is one round of edits: its episode (the subject is aider's summary,
            # not the user's prompt, so no prompt is recorded)
            turn_id=commit.sha,
            tool="commit",
            tool_use_id=commit.sha,
            source="import",
            created_file=created,
            backfilled=True,
            dedupe_key=key,
        )
        judged = Judged(outcome, reason, sim, ret, "import", (outcome, sim, ret))
        prepared.edits.append(PreparedEdit(proposal, located, relative, commit.at, judged))
    return prepared
