"""When a repository's HEAD moved (a commit, a checkout, a reset): the late pass runs then. One
stat of the reflog per repository and tick."""

from __future__ import annotations

import os
import subprocess

__all__ = ["HeadMarks"]


class HeadMarks:
    """The last seen mark (the reflog's size and time, and HEAD's) per workspace root."""

    def __init__(self) -> None:
        self._git_dirs: dict[str, str | None] = {}
        self._marks: dict[str, tuple[int, ...]] = {}

    def _git_dir(self, root: str) -> str | None:
        if root not in self._git_dirs:
            found = None
            try:
                out = subprocess.run(
                    ["git", "-C", root, "rev-parse", "--absolute-git-dir"],
                    capture_output=True,
                    text=True,
                    timeout=10,
                )
                if out.returncode == 0:
                    found = out.stdout.strip() or None
            except (OSError, subprocess.SubprocessError):
                found = None
            self._git_dirs[root] = found
        return self._git_dirs[root]

    def _mark(self, git_dir: str) -> tuple[int, ...]:
        mark: list[int] = []
        for name in ("HEAD", os.path.join("logs", "HEAD")):
            try:
                st = os.stat(os.path.join(git_dir, name))
                mark += [st.st_mtime_ns, st.st_size]
            except OSError:
                mark += [0, 0]
        return tuple(mark)

    def moved(self, roots: list[str]) -> list[str]:
        """The roots whose HEAD moved since the last call (the first call notes them only)."""
        found = []
        for root in roots:
            git_dir = self._git_dir(root)
            if git_dir is None:
                continue
            mark = self._mark(git_dir)
            before = self._marks.get(root)
            self._marks[root] = mark
            if before is not None and before != mark:
                found.append(root)
        return found
