"""What git remembers of a work tree after an edit: the first commit touching its file.

A past edit is judged against the nearest later state on record, and a backfill asks about
thousands of edits of the same few work trees, so each tree's log is read once and each file
version shown once.
"""

from __future__ import annotations

import os
import subprocess

__all__ = ["GitHistory"]


class GitHistory:
    """Tracked files as the first commit after a moment left them: one `git log` per work
    tree (the files each commit touched), one `git show` per file version, all cached."""

    def __init__(self) -> None:
        self._logs: dict[str, tuple[float, dict[str, list[tuple[int, str]]]] | None] = {}
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

    def _log(self, root: str, since: float) -> dict[str, list[tuple[int, str]]] | None:
        cached = self._logs.get(root, ())
        if cached is None:
            return None  # not a git work tree (or git is missing)
        if cached and cached[0] <= since:
            return cached[1]
        # commits since a day before the edits asked about, oldest first, with their files
        out = self._git(
            root,
            "log",
            "--reverse",
            "--no-renames",
            "--name-only",
            "--format=%x00%ct %H",
            f"--since={int(since) - 86400}",
        )
        if out is None:
            self._logs[root] = None
            return None
        files: dict[str, list[tuple[int, str]]] = {}
        for block in out.split("\0")[1:]:
            header, _, names = block.partition("\n")
            stamp, _, sha = header.partition(" ")
            if not stamp.isdigit():
                continue
            for name in names.split("\n"):
                if name:
                    files.setdefault(name, []).append((int(stamp), sha))
        self._logs[root] = (since, files)
        return files

    def after(self, root: str, relative: str, moment: float) -> tuple[str, str | None] | None:
        """(commit, text) of the first commit touching the file at or after `moment`."""
        if root not in self._trees:
            self._trees[root] = os.path.exists(os.path.join(root, ".git"))
        if not self._trees[root]:
            return None
        log = self._log(root, moment)
        if not log:
            return None
        commit = next((sha for t, sha in log.get(relative, ()) if t >= moment), None)
        if commit is None:
            return None
        show = (root, relative, commit)
        if show not in self._show:
            self._show[show] = self._git(root, "show", f"{commit}:{relative}")
        return commit, self._show[show]
