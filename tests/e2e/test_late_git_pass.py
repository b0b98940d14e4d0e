"""The late pass over a real repository, called as the library: a workspace that is a folder
inside the repository, and a pass limited to one repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from capture.recording.late_git import late_pass
from capture.store.database import Store
from capture.store.late_signal_rows import late_signals

T0 = 1_790_000_000


def git(repo: Path, *args: str, at: int | None = None) -> None:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="dev",
        GIT_AUTHOR_EMAIL="dev@example.com",
        GIT_COMMITTER_NAME="dev",
        GIT_COMMITTER_EMAIL="dev@example.com",
    )
    if at is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{at} +0000"
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def kept(store: Store, root: Path, pid: str, path: str, new_text: str) -> None:
    conn = store.conn
    with store.transaction():
        conn.execute(
            "INSERT OR IGNORE INTO workspaces (root, created_at) VALUES (?, 0)", (str(root),)
        )
        ws = conn.execute("SELECT id FROM workspaces WHERE root = ?", (str(root),)).fetchone()[0]
        conn.execute(
            "INSERT INTO episodes (id, workspace_id, agent, started_at, last_at) "
            "VALUES (?, ?, 'codex', ?, ?)",
            ("e" + pid, ws, T0, T0),
        )
        conn.execute(
            "INSERT INTO proposals (id, episode_id, workspace_id, path, agent, state, outcome, "
            "created_at, applied_at) VALUES (?, ?, ?, ?, 'codex', 'applied', 'kept', ?, ?)",
            (pid, "e" + pid, ws, path, T0, T0),
        )
        conn.execute(
            "INSERT INTO hunks (proposal_id, idx, old_text, new_text) VALUES (?, 0, '', ?)",
            (pid, new_text),
        )


def test_a_workspace_inside_the_repository_and_a_pass_limited_to_one(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "pkg" / "mod.py").write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start", at=T0 - 100)
    (repo / "pkg" / "mod.py").write_text("x = 1\ny = compute(x)\n")
    git(repo, "commit", "-q", "-am", "y", at=T0 + 100)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "a.py").write_text("z = 3\n")
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", "z", at=T0 + 100)

    store = Store.open(tmp_path / "c.db")
    kept(store, repo / "pkg", "p1", "mod.py", "y = compute(x)\n")
    kept(store, other, "p2", "a.py", "z = 3\n")

    only = late_pass(store, now=T0 + 1000, under=str(repo))
    assert (only.proposals, only.repositories) == (1, 1)
    signals = late_signals(store.conn)
    assert set(signals) == {"p1"}
    assert signals["p1"].committed == 1 and signals["p1"].path_at_commit == "pkg/mod.py"

    everything = late_pass(store, now=T0 + 1000)
    assert everything.proposals == 2  # p1 again (its windows are open), and p2
    assert late_signals(store.conn)["p2"].commit is not None
