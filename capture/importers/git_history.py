"""What git remembers of a work tree after an edit: the commit that carried the agent's lines.

A past edit is judged against the first commit after it that holds its lines (the history from
the edit's time on, renames followed), not merely the first commit touching the file: the lines
often land a commit or two later. A backfill asks about
thousands of edits of the same few work trees, so each tree's log is read once and each file
version shown once.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

__all__ = ["GitHistory"]

#: One commit of a work tree's log: (time, sha, [(status, path before, path after)]).
_Commit = tuple[int, str, list[tuple[str, str, str]]]


class GitHistory:
    """Tracked files as the first commit after a moment left them: one `git log` per work
    tree (the files each commit touched), one `git show` per file version, all cached."""

    def __init__(self) -> None:
        self._logs: dict[str, tuple[float, list[_Commit]] | None] = {}
        self._show: dict[tuple[str, str, str], str | None] = {}
        self._trees: dict[str, bool] = {}  # whether a work tree root has .git

    def _git(self, root: str, *args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", "-C", root, *args], capture_output=True, timeout=120, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode != 0:
            return None
        return proc.stdout.decode("utf-8", "replace")

    def _log(self, root: str, since: float) -> list[_Commit] | None:
        cached = self._logs.get(root, ())
        if cached is None:
            return None  # not a git work tree (or git is missing)
        if cached and cached[0] <= since:
            return cached[1]
        # commits since a day before the edits asked about, oldest first, with their files and
        # renames (first parent only: a merge repeats what its branch did)
        out = self._git(
            root,
            "log",
            "--reverse",
            "--first-parent",
            "-M",
            "--name-status",
            "--format=%x00%ct %H",
            f"--since={int(since) - 86400}",
        )
        if out is None:
            self._logs[root] = None
            return None
        commits: list[_Commit] = []
        for block in out.split("\0")[1:]:
            header, _, names = block.partition("\n")
            stamp, _, sha = header.partition(" ")
            if not stamp.isdigit():
                continue
            changes = []
            for line in names.split("\n"):
                parts = line.split("\t")
                if len(parts) == 3:  # R<score> or C<score>: before, after
                    changes.append((parts[0][:1], parts[1], parts[2]))
                elif len(parts) == 2:
                    changes.append((parts[0][:1], parts[1], parts[1]))
            commits.append((int(stamp), sha, changes))
        self._logs[root] = (since, commits)
        return commits

    def after(
        self,
        root: str,
        relative: str,
        moment: float,
        carries: Callable[[str], bool] | None = None,
    ) -> tuple[str, str | None] | None:
        """(commit, text) of the first commit at or after `moment` whose file `carries` the
        agent's lines (renames followed; the file's path at that commit is the one shown);
        without `carries`, of the first commit touching the file. None: no such commit."""
        if root not in self._trees:
            self._trees[root] = os.path.exists(os.path.join(root, ".git"))
        if not self._trees[root]:
            return None
        log = self._log(root, moment)
        if not log:
            return None
        path = relative
        for stamp, sha, changes in log:
            if stamp < moment:
                continue  # the edit was made on top of these: its path is theirs already
            change = next((c for c in changes if c[1] == path), None)
            if change is None:
                continue
            status, _, after_path = change
            if status == "D":
                return None if carries is not None else (sha, None)
            path = after_path
            text = self._text(root, sha, path)
            if carries is None or (text is not None and carries(text)):
                return sha, text
        return None

    def _text(self, root: str, sha: str, path: str) -> str | None:
        show = (root, path, sha)
        if show not in self._show:
            self._show[show] = self._git(root, "show", f"{sha}:{path}")
        return self._show[show]
