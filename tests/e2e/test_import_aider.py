"""`capture import aider [RANGE]` on a real git repository: commits aider marked (trailer, author
name, subject prefix) become proposals judged against the work tree now; others do not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from capture.importers.aider import file_diffs, is_aider_commit
from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import count, no_agent_env  # noqa: F401 - autouse fixture

TRAILER = "Co-authored-by: aider (anthropic/claude-sonnet-5) <aider@aider.chat>"


def commit(repo: Path, message: str, author: str = "Dana", committer: str = "Dana") -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME=author,
        GIT_AUTHOR_EMAIL="dana@example.com",
        GIT_COMMITTER_NAME=committer,
        GIT_COMMITTER_EMAIL="dana@example.com",
    )
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True, env=env)
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True)
    return out.stdout.strip()


def test_aider_commits_become_judged_proposals(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    totals = repo / "totals.py"
    before = "def tax(subtotal, rate):\n    return round(subtotal * rate, 2)\n\n\nX = 1\n"
    totals.write_text(before)
    commit(repo, "initial")
    after = before.replace("round(subtotal * rate, 2)", "(subtotal * rate).quantize(CENT)")
    totals.write_text(after)
    trailer_sha = commit(repo, f"fix: round tax half-up\n\n{TRAILER}")
    (repo / "notes.md").write_text("# Notes\n\nRounding is half-up.\n")
    author_sha = commit(repo, "docs: add notes", author="Dana (aider)", committer="Dana (aider)")
    (repo / "dirty.py").write_text("print('the user wrote this')\n")
    commit(repo, "chore: dirty files", committer="Dana (aider)")  # the user's, not aider's
    (repo / "prefix.py").write_text("VALUE = 2\n")
    prefix_sha = commit(repo, "aider: feat: add VALUE")

    totals.write_text(before)  # the user reverted aider's tax change since
    (repo / "prefix.py").unlink()  # and deleted a file aider created: undone, not lost
    result = run_capture("import", "aider", cwd=repo)
    assert result.returncode == 0, result.stderr
    episodes = {e["turn_id"]: e for e in episodes_json(run_capture)}
    assert set(episodes) == {trailer_sha, author_sha, prefix_sha}
    by_file = {p["file"]: p for e in episodes.values() for p in e["proposals"]}
    assert set(by_file) == {"totals.py", "notes.md", "prefix.py"}
    assert by_file["totals.py"]["outcome"] == "undone"
    assert by_file["notes.md"]["outcome"] == "kept" and by_file["notes.md"]["created_file"]
    assert by_file["prefix.py"]["outcome"] == "undone" and by_file["prefix.py"]["created_file"]
    assert all(p["agent"] == "aider" and p["backfilled"] for p in by_file.values())
    assert episodes[trailer_sha]["model"] == "anthropic/claude-sonnet-5"
    assert episodes[trailer_sha]["started_at"] is not None

    again = run_capture("import", "aider", cwd=repo)
    assert "0 proposal(s)" in again.stdout and "3 already recorded" in again.stdout
    assert count(capture_home, "proposals") == 3

    # a range: only the commits in it
    other_home = {"CAPTURE_HOME": str(tmp_path / "other-home")}
    ranged = run_capture("import", "aider", "HEAD~1..HEAD", cwd=repo, env=other_home)
    assert "1 proposal(s)" in ranged.stdout, ranged.stdout

    outside = run_capture("import", "aider", cwd=tmp_path)
    assert outside.returncode != 0 and "not in a git work tree" in outside.stderr
    bad = run_capture("import", "aider", "no-such-rev..HEAD", cwd=repo)
    assert bad.returncode != 0 and bad.stderr.startswith("capture: error: git log")


def test_signals_and_diffs() -> None:
    assert is_aider_commit("Dana", f"fix: x\n\n{TRAILER}")
    assert is_aider_commit("Dana (aider)", "fix: x")
    assert is_aider_commit("Dana", "aider: fix: x")
    assert not is_aider_commit("Dana", "fix: mention aider in docs")
    patch = (
        "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n"
        "@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
        "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-z = 1\n"
        "diff --git a/logo.png b/logo.png\nnew file mode 100644\nBinary files /dev/null and "
        "b/logo.png differ\n"
    )
    ((path, created, diff),) = file_diffs(patch)
    assert (path, created) == ("a.py", False)
    assert diff.startswith("@@ -1,2 +1,2 @@")
