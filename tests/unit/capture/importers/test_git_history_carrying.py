"""The commit that carries an edit's lines (capture.importers.git_history), in a real git
repository: the first commit after the edit that holds them, found through a rename."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from capture.importers.git_history import GitHistory

T0 = 1_790_000_000


def _git(ws: Path, *args: str, at: int | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "d", "GIT_AUTHOR_EMAIL": "d@example.invalid"}
    env.update(GIT_COMMITTER_NAME="d", GIT_COMMITTER_EMAIL="d@example.invalid")
    if at is not None:
        env.update(GIT_AUTHOR_DATE=f"@{at} +0000", GIT_COMMITTER_DATE=f"@{at} +0000")
    return subprocess.run(
        ["git", "-C", str(ws), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def test_the_carrying_commit_is_found_after_a_rename(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    ws.mkdir()
    _git(ws, "init", "-q")
    body = "".join(f"line {i}\n" for i in range(20))
    (ws / "a.py").write_text(body)
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "start", at=T0)
    # after the edit (at T0 + 10): a commit without the agent's line, then a rename that
    # brings it
    (ws / "a.py").write_text(body + "other\n")
    _git(ws, "commit", "-qam", "other", at=T0 + 100)
    _git(ws, "mv", "a.py", "b.py")
    (ws / "b.py").write_text(body + "other\nagent line\n")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "move and carry", at=T0 + 200)
    carrying = _git(ws, "rev-parse", "HEAD")

    history = GitHistory()
    found = history.after(str(ws), "a.py", T0 + 10, lambda text: "agent line" in text)
    assert found is not None and found[0] == carrying
    assert found[1] is not None and found[1].endswith("agent line\n")
    first = history.after(str(ws), "a.py", T0 + 10)
    assert first is not None and first[0] != carrying
    assert history.after(str(ws), "a.py", T0 + 10, lambda text: "never" in text) is None
