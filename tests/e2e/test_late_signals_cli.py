"""Late signals and tiers through real git and the real `capture` command.

The clock is simulated with commit dates (GIT_AUTHOR_DATE / GIT_COMMITTER_DATE) and CAPTURE_NOW
for the late pass: an edit is kept and committed, reverted a week later, and measured 15 days on.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.conftest import RunCapture, episodes_json
from tests.e2e.test_cli_outcomes import AGENT_BODY, ORIGINAL, propose, settle

DAY = 86400


def git(ws: Path, *args: str, at: float | None = None) -> str:
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="dev",
        GIT_AUTHOR_EMAIL="dev@example.com",
        GIT_COMMITTER_NAME="dev",
        GIT_COMMITTER_EMAIL="dev@example.com",
    )
    if at is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{int(at)} +0000"
    done = subprocess.run(
        ["git", "-C", str(ws), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def repo(tmp_path: Path, start: float) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "calc.py").write_text(ORIGINAL)
    git(ws, "add", "calc.py")
    git(ws, "commit", "-q", "-m", "calc: a start", at=start - DAY)
    return ws


def kept_edit(run_capture: RunCapture, ws: Path) -> dict:
    (ws / "calc.py").write_text(ORIGINAL.replace("    return 0\n", AGENT_BODY))
    propose(run_capture, ws, "calc.py")
    settle(run_capture, ws)
    (episode,) = episodes_json(run_capture)
    assert episode["proposals"][0]["outcome"] == "kept"
    return episode


def late(run_capture: RunCapture, ws: Path, now: float) -> str:
    result = run_capture("observe", "--late", cwd=ws, env={"CAPTURE_NOW": str(now)}, check=True)
    return result.stdout


def test_kept_committed_then_reverted_a_week_later_is_debt(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    start = time.time()
    ws = repo(tmp_path, start)
    episode = kept_edit(run_capture, ws)
    # Settled, not committed yet: silver.
    assert episode["tier"]["tier"] == "silver"
    assert "not committed" in episode["tier"]["reasons"]

    git(ws, "commit", "-q", "-am", "calc: total adds the items", at=start + 60)
    carrier = git(ws, "rev-parse", "HEAD")
    git(ws, "revert", "--no-edit", "HEAD", at=start + 7 * DAY)
    reverter = git(ws, "rev-parse", "HEAD")
    out = late(run_capture, ws, start + 15 * DAY)
    assert "1 committed" in out

    shown = json.loads(run_capture("show", episode["id"], "--json", check=True).stdout)
    (proposal,) = shown["proposals"]
    signals = proposal["late_signals"]
    assert signals["commit"] == carrier
    assert signals["committed_lines"] == signals["lines"] == 4
    assert signals["reverted_by"] == reverter
    assert signals["revert_kind"] == "revert commit"
    assert signals["churn_14d"] == 1.0
    assert proposal["tier"]["tier"] == "debt"
    assert proposal["tier"]["reasons"] == ["reverted"]
    assert shown["tier"]["tier"] == "debt"
    assert shown["tier"]["reasons"] == ["reverted"]
    # The history keeps the earlier decision and when the new one was made (the simulated now).
    assert [c["tier"] for c in shown["tier_history"]] == ["silver", "debt"]
    assert shown["tier_history"][-1]["decided_at"].startswith(
        time.strftime("%Y-%m-%d", time.gmtime(start + 15 * DAY))
    )

    text = run_capture("show", episode["id"], check=True, env={"NO_COLOR": "1"}).stdout
    assert "tier debt: reverted" in text
    assert f"reverted by {reverter[:10]}" in text

    report = json.loads(run_capture("report", "--json", "--all", cwd=ws, check=True).stdout)
    (row,) = report["tiers"]["by_agent_model"]
    assert (row["agent"], row["model"], row["tiers"]["debt"], row["debt_rate"]) == (
        "claude-code",
        "test-model",
        1,
        1.0,
    )
    terminal = run_capture("report", "--all", cwd=ws, env={"COLUMNS": "160"}, check=True).stdout
    assert "Quality tiers" in terminal and "100%" in terminal
    page = tmp_path / "report.html"
    run_capture("report", "--all", "--html", str(page), cwd=ws, check=True)
    assert "Quality tiers (proposals) and debt rate" in page.read_text()

    # A second pass with nothing new changes nothing.
    late(run_capture, ws, start + 16 * DAY)
    again = json.loads(run_capture("show", episode["id"], "--json", check=True).stdout)
    assert len(again["tier_history"]) == 2

    # The training export: the reverted edit is a negative, never a positive.
    out = tmp_path / "export"
    run_capture(
        "export",
        "--format",
        "kto,dpo,sft",
        "--level",
        "full",
        "--out",
        str(out),
        "-q",
        cwd=ws,
        check=True,
    )
    (kto,) = [json.loads(line) for line in (out / "kto.jsonl").read_text().splitlines()]
    assert kto["label"] is False and kto["completion"][-1]["content"] == AGENT_BODY
    # no positive example of it: no SFT row, and no DPO pair it is the chosen side of (a format
    # with no rows writes no file)
    assert not (out / "sft.jsonl").exists() and not (out / "dpo.jsonl").exists()


def test_kept_and_left_alone_for_two_weeks_with_a_passing_run(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    start = time.time()
    ws = repo(tmp_path, start)
    (ws / "calc.py").write_text(ORIGINAL.replace("    return 0\n", AGENT_BODY))
    propose(run_capture, ws, "calc.py")
    passing = "import sys; print('1 passed'); sys.exit(0)"
    run_capture("run", "--", "python", "-c", passing, cwd=ws, check=True)
    settle(run_capture, ws)
    git(ws, "commit", "-q", "-am", "calc: total adds the items", at=start + 60)
    # Another file changes later: the agent's lines are untouched.
    (ws / "notes.txt").write_text("later\n")
    git(ws, "add", "notes.txt")
    git(ws, "commit", "-q", "-m", "notes", at=start + 3 * DAY)

    late(run_capture, ws, start + 5 * DAY)
    (episode,) = episodes_json(run_capture)
    assert episode["tier"]["tier"] == "silver"
    assert episode["proposals"][0]["tier"]["reasons"] == ["14-day window still open"]

    late(run_capture, ws, start + 15 * DAY)
    (episode,) = episodes_json(run_capture)
    assert episode["proposals"][0]["late_signals"]["churn_14d"] == 0.0
    assert episode["proposals"][0]["tier"]["tier"] == "gold"
    assert episode["tier"]["tier"] == "gold"


def test_install_git_runs_the_late_pass_on_commit_and_keeps_the_users_hook(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    start = time.time()
    ws = repo(tmp_path, start)
    hook = ws / ".git" / "hooks" / "post-commit"
    users = '#!/bin/sh\necho mine >> "$(git rev-parse --show-toplevel)/.git/users-hook-ran"\n'
    hook.write_text(users)
    hook.chmod(0o755)

    installed = run_capture("install", "git", cwd=ws, check=True)
    assert "post-commit hook installed" in installed.stdout
    text = hook.read_text()
    assert text.startswith(users) and "observe --late --quiet --repo" in text
    again = run_capture("install", "git", cwd=ws, check=True)
    assert "already installed" in again.stdout
    assert hook.read_text() == text

    episode = kept_edit(run_capture, ws)
    # git runs the hook with this process's environment: its CAPTURE_HOME is the test's.
    assert os.environ["CAPTURE_HOME"] == str(run_capture.home)  # type: ignore[attr-defined]
    git(ws, "commit", "-q", "-am", "calc: total adds the items")
    assert (ws / ".git" / "users-hook-ran").read_text() == "mine\n"
    deadline = time.time() + 60
    signals = None
    while time.time() < deadline and signals is None:
        time.sleep(0.5)
        shown = json.loads(run_capture("show", episode["id"], "--json", check=True).stdout)
        signals = shown["proposals"][0]["late_signals"]
    assert signals is not None, "the post-commit hook did not run the late pass"
    assert signals["commit"] == git(ws, "rev-parse", "HEAD")

    removed = run_capture("uninstall", "git", cwd=ws, check=True)
    assert "removed from" in removed.stdout
    assert hook.read_text() == users
    # A hook that was only ours goes away whole.
    hook.unlink()
    run_capture("install", "git", cwd=ws, check=True)
    run_capture("uninstall", "git", cwd=ws, check=True)
    assert not hook.exists()


def test_a_later_fix_of_the_agents_lines_after_a_rename_is_debt(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    start = time.time()
    ws = repo(tmp_path, start)
    episode = kept_edit(run_capture, ws)
    git(ws, "commit", "-q", "-am", "calc: total adds the items", at=start + 60)
    carrier = git(ws, "rev-parse", "HEAD")
    late(run_capture, ws, start + 120)
    shown = json.loads(run_capture("show", episode["id"], "--json", check=True).stdout)
    assert shown["proposals"][0]["late_signals"]["renamed"] is False
    git(ws, "mv", "calc.py", "arith.py")
    git(ws, "commit", "-q", "-m", "move calc to arith", at=start + DAY)
    # A fix elsewhere in the file does not blame to the agent's commit: not a fix of its lines.
    arith = ws / "arith.py"
    arith.write_text(arith.read_text().replace("print(total([1, 2]))", "print(total([1, 2, 3]))"))
    git(ws, "commit", "-q", "-am", "fix the example", at=start + 2 * DAY)
    late(run_capture, ws, start + 2 * DAY + 60)
    shown = json.loads(run_capture("show", episode["id"], "--json", check=True).stdout)
    assert shown["proposals"][0]["late_signals"]["fixed_by"] is None

    arith.write_text(arith.read_text().replace("result += item", "result += int(item)"))
    git(ws, "commit", "-q", "-am", "Fix total for strings", at=start + 3 * DAY)
    fixer = git(ws, "rev-parse", "HEAD")
    late(run_capture, ws, start + 20 * DAY)
    shown = json.loads(run_capture("show", episode["id"], "--json", check=True).stdout)
    signals = shown["proposals"][0]["late_signals"]
    assert signals["commit"] == carrier
    assert signals["fixed_by"] == fixer
    assert signals["churn_14d"] == 0.25  # one of the four lines changed, across the rename
    assert shown["proposals"][0]["tier"]["reasons"] == ["fixed after"]
    assert shown["tier"]["tier"] == "debt"


def test_a_commit_that_leaves_the_agents_syntax_broken_is_debt(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    start = time.time()
    ws = repo(tmp_path, start)
    broken = "    result = (0\n    # TODO: handle None\n    return result\n"
    (ws / "calc.py").write_text(ORIGINAL.replace("    return 0\n", broken))
    propose(run_capture, ws, "calc.py", new_text=broken)
    settle(run_capture, ws)
    git(ws, "commit", "-q", "-am", "calc: total", at=start + 60)
    late(run_capture, ws, start + DAY)
    (episode,) = episodes_json(run_capture)
    signals = episode["proposals"][0]["late_signals"]
    assert signals["syntax_errors_added"] >= 1
    assert signals["markers_added"] == 1
    assert episode["proposals"][0]["tier"]["reasons"] == ["syntax errors added at commit"]


def test_bad_input_is_one_line_and_a_workspace_without_git_is_skipped(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    bad = run_capture("observe", "--late", cwd=plain, env={"CAPTURE_NOW": "next tuesday"})
    assert bad.returncode != 0
    assert bad.stderr.strip().count("\n") == 0 and "CAPTURE_NOW" in bad.stderr
    outside = run_capture("install", "git", cwd=plain)
    assert outside.returncode != 0 and "not inside a git work tree" in outside.stderr
    alone = run_capture("observe", "--repo", str(plain), cwd=plain)
    assert alone.returncode != 0 and "--repo goes with --late" in alone.stderr

    # A kept edit in a folder that is not a git work tree: skipped, said so, nothing lost.
    (plain / "calc.py").write_text(ORIGINAL.replace("    return 0\n", AGENT_BODY))
    propose(run_capture, plain, "calc.py")
    settle(run_capture, plain)
    out = late(run_capture, plain, time.time())
    assert "not a git work tree" in out
    (episode,) = episodes_json(run_capture)
    assert episode["proposals"][0]["outcome"] == "kept"
    assert episode["proposals"][0]["late_signals"] is None
