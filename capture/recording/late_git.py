"""The late pass: each kept or edited proposal's lines followed through git, without an editor.

Run by `capture observe --late` (a cron-less catch-up) and by the post-commit hook that
`capture install git` puts in a repository. Per repository: one `git log --name-status` over the
commits since the oldest edit still watched (messages for reverts and fixes; changed paths,
renames followed forward from each edited file), and one `git cat-file --batch` for every file
text read; fix commits that touched the file get a `git blame` of the lines they deleted (SZZ).
What it means is decided in `capture.tiers.late_signals`; the tiers are recomputed after
(`late_tiers`).

A proposal is watched until its lines' 30-day window has closed and been measured, so a pass
over a long-lived store reads only the recent edits.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from capture.recording.late_syntax import syntax_errors
from capture.store.database import Store
from capture.store.late_signal_rows import watched_proposals, write_late_signals
from capture.tiers.late_signals import (
    CHURN_DAYS,
    DAY,
    Commit,
    FileAtCommit,
    LateSignals,
    added_lines,
    file_commits,
    find_commit,
    is_fix_message,
    measure,
)

__all__ = ["LatePassReport", "late_pass"]

#: watched until this many days after the commit (the longest churn window)
WATCH_DAYS = max(CHURN_DAYS)
# a commit date a little before the edit's recorded time still counts (clocks, rounding)
_SLACK_S = 120.0


@dataclass(slots=True)
class LatePassReport:
    proposals: int = 0
    committed: int = 0
    repositories: int = 0
    measured: list[str] = field(default_factory=list)  # proposal ids
    skipped: list[str] = field(default_factory=list)  # "root: why"


@dataclass(frozen=True, slots=True)
class _Watched:
    proposal_id: str
    root: str
    path: str
    applied_at: float
    hunks: tuple[tuple[str, str], ...]


def _git(repo: str, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", repo, *args],
        capture_output=True,
        check=False,
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
    )
    if done.returncode != 0:
        raise _GitError(done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""])
    return done.stdout.decode("utf-8", "replace")


class _GitError(Exception):
    pass


class _Blobs:
    """File texts at commits through one `git cat-file --batch` process."""

    def __init__(self, repo: str) -> None:
        self._proc = subprocess.Popen(
            ["git", "-C", repo, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )

    def text(self, sha: str, path: str) -> str | None:
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(f"{sha}:{path}\n".encode())
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode("utf-8", "replace").split()
        if len(header) != 3:  # "<spec> missing"
            return None
        data = self._proc.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait()


def _watched(store: Store, now: float, under: str | None) -> list[_Watched]:
    """Applied proposals kept or edited whose lines are still within their longest window."""
    rows = watched_proposals(
        store.conn,
        applied_since=now - WATCH_DAYS * DAY,
        watch_seconds=WATCH_DAYS * DAY,
        under=under,
    )
    return [_Watched(*row) for row in rows]


def _log(repo: str, since: float) -> list[Commit]:
    """HEAD's commits since `since`, oldest first, with their messages and changed paths."""
    out = _git(
        repo, "log", "-z", "-M", "--name-status", "--format=%x1e%H%x1f%ct%x1f%B",
        f"--since=@{int(since)}", "HEAD",
    )  # fmt: skip
    commits = []
    for record in out.split("\x1e"):
        if not record.strip():
            continue
        head, _, rest = record.partition("\0")
        sha, at, message = head.split("\x1f", 2)
        fields = [f for f in rest.lstrip("\n").split("\0") if f]
        changes = []
        i = 0
        while i < len(fields):
            status = fields[i][:1]
            if status in ("R", "C") and i + 2 < len(fields):
                changes.append((status, fields[i + 1], fields[i + 2]))
                i += 3
            elif i + 1 < len(fields):
                changes.append((status, fields[i + 1], fields[i + 1]))
                i += 2
            else:
                break
        commits.append(Commit(sha.strip(), float(at), message.rstrip("\n"), tuple(changes)))
    commits.reverse()
    return commits


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)


def _blamed_to(repo: str, fix: str, before_path: str, after_path: str, carrier: str) -> bool:
    """SZZ: does a line the fix commit deleted from the file blame back to `carrier`?"""
    try:
        diff = _git(
            repo, "diff", "-U0", "--no-color", "-M", f"{fix}^", fix, "--", before_path, after_path
        )
    except _GitError:
        return False
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        if count == 0:
            continue
        try:
            blame = _git(
                repo, "blame", "-l", "-s", "-L", f"{start},+{count}", f"{fix}^", "--", before_path
            )
        except _GitError:
            continue
        if any(line.split(" ", 1)[0].lstrip("^") == carrier for line in blame.splitlines()):
            return True
    return False


def _toplevel(root: str) -> str | None:
    try:
        return _git(root, "rev-parse", "--show-toplevel").strip()
    except (_GitError, OSError):
        return None


def _measure_one(
    w: _Watched,
    repo: str,
    prefix: str,
    blobs: _Blobs,
    log: list[Commit],
    now: float,
) -> LateSignals:
    lines = added_lines(w.hunks)
    old_text = "".join(old for old, _ in w.hunks)
    since = w.applied_at - _SLACK_S
    after_edit = [c for c in log if c.at >= since]
    history = [
        FileAtCommit(c.sha, c.at, where, None if deleted else blobs.text(c.sha, where), c.message)
        for c, where, deleted in file_commits(prefix + w.path, after_edit)
    ]
    # The file as committed before the edit: lines the agent wrote that it already held (a
    # second `return result`) are not taken for the agent's committed.
    base = blobs.text(f"{history[0].sha}^", history[0].path) if history else None
    carried = find_commit(lines, history, base)
    if carried is None:
        return measure(lines=lines, old_text=old_text, history=history, base=base, now=now)
    index = history.index(carried)
    position = next((i for i, c in enumerate(log) if c.sha == carried.sha), len(log))
    later = [(c.sha, c.at, c.message) for c in log[position + 1 :]]
    fixes = []
    for before, state in zip(history[index:], history[index + 1 :], strict=False):
        if state.at > carried.at + WATCH_DAYS * DAY or not is_fix_message(state.message):
            continue
        if _blamed_to(repo, state.sha, before.path, state.path, carried.sha):
            fixes.append((state.sha, state.at))
    before_text = blobs.text(f"{carried.sha}^", carried.path)
    after_errors = syntax_errors(carried.path, carried.text)
    added = None
    if after_errors is not None:
        before_errors = syntax_errors(carried.path, before_text) if before_text else 0
        added = max(0, after_errors - (before_errors or 0))
    return measure(
        lines=lines,
        old_text=old_text,
        history=history,
        later_commits=later,
        fixes=fixes,
        syntax_errors_added=added,
        base=base,
        path=prefix + w.path,
        now=now,
    )


def late_pass(store: Store, *, now: float, under: str | None = None) -> LatePassReport:
    """Measure the late signals of every watched proposal (of the workspaces at or under the
    folder `under`, if given)."""
    report = LatePassReport()
    by_root: dict[str, list[_Watched]] = defaultdict(list)
    for w in _watched(store, now, under):
        by_root[w.root].append(w)
    for root, watched in by_root.items():
        repo = _toplevel(root) if Path(root).is_dir() else None
        if repo is None:
            report.skipped.append(f"{root}: not a git work tree")
            continue
        report.repositories += 1
        rel = os.path.relpath(root, repo)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        since = min(w.applied_at for w in watched) - _SLACK_S
        try:
            log = _log(repo, since)
        except _GitError as exc:  # e.g. a repository with no commit yet
            report.skipped.append(f"{root}: {exc}")
            continue
        blobs = _Blobs(repo)
        measured: list[tuple[str, LateSignals]] = []
        try:
            for w in watched:
                try:
                    signals = _measure_one(w, repo, prefix, blobs, log, now)
                except _GitError as exc:
                    report.skipped.append(f"{root}/{w.path}: {exc}")
                    continue
                measured.append((w.proposal_id, signals))
        finally:
            blobs.close()
        with store.transaction() as conn:
            write_late_signals(conn, measured)
        report.proposals += len(measured)
        report.committed += sum(1 for _, s in measured if s.commit is not None)
        report.measured.extend(pid for pid, _ in measured)
    return report
