"""`capture import claude-code|codex` as a real process, on the example transcripts moved into a
test workspace: backfilled proposals with outcomes judged against the files now (and the next
commit, for a file git tracks), test runs, nothing recorded twice."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    TOTALS_AFTER,
    TOTALS_BEFORE,
    count,
    example,
    example_text,
    hook,
    make_workspace,
    no_agent_env,
)

SAMPLES = {
    "claude-code": ("claude_code_transcript_sample.jsonl", "Edit"),
    "codex": ("codex_rollout_sample.jsonl", "apply_patch"),
}


def transcript(ws: Path, source: str) -> Path:
    name, _ = SAMPLES[source]
    path = ws.parent / "history" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(example_text(name, ws))
    return path


@pytest.mark.parametrize("source", sorted(SAMPLES))
@pytest.mark.parametrize(
    ("on_disk", "outcome"), [(TOTALS_AFTER, "kept"), (TOTALS_BEFORE, "undone")]
)
def test_import_judges_past_edits_against_the_files_now(
    source: str,
    on_disk: str,
    outcome: str,
    tmp_path: Path,
    capture_home: Path,
    run_capture: RunCapture,
) -> None:
    ws = make_workspace(tmp_path)
    (ws / "invoicer" / "totals.py").write_text(on_disk)
    path = transcript(ws, source)
    result = run_capture("import", source, str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "1 file(s) imported" in result.stdout and "1 proposal(s)" in result.stdout
    (episode,) = episodes_json(run_capture)
    assert episode["agent"] == source
    assert episode["prompt"].startswith("tax() rounds 10.05*0.5 down to 5.02")
    assert episode["started_at"].startswith("2026-08-21T09:")
    assert episode["ended_at"] is not None and episode["settled_at"] is not None
    (proposal,) = episode["proposals"]
    assert proposal["file"] == "invoicer/totals.py"
    assert (proposal["backfilled"], proposal["source"], proposal["tool"]) == (
        True,
        "import",
        SAMPLES[source][1],
    )
    assert proposal["outcome"] == outcome
    assert all(c["observed_at"] for c in proposal["checkpoints"])
    (run,) = episode["test_runs"]
    assert (run["command"], run["exit_code"], run["passed"], run["failed"]) == (
        "python -m pytest -q",
        1,
        2,
        1,
    )

    # importing twice adds nothing twice, also when the transcript changed since
    again = run_capture("import", source, str(path), cwd=tmp_path)
    assert "0 file(s) imported, 1 unchanged" in again.stdout
    with path.open("a") as fh:
        fh.write("\n")
    again = run_capture("import", source, str(path), cwd=tmp_path)
    assert "1 file(s) imported" in again.stdout and "1 already recorded" in again.stdout
    assert count(capture_home, "proposals") == 1
    assert count(capture_home, "test_runs") == 1


def test_edits_a_hook_recorded_are_not_imported_again(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    hook(run_capture, "claude-code", example("claude_code_posttooluse_edit.json", ws), cwd=ws)
    result = run_capture("import", "claude-code", str(transcript(ws, "claude-code")))
    assert "0 proposal(s)" in result.stdout and "1 already recorded" in result.stdout
    assert count(capture_home, "proposals") == 1


def test_the_next_commit_judges_the_windows_of_a_tracked_file(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    """Committed as the agent left it the day after; reverted in the work tree since: the
    windows say kept (the commit), the late check says undone (now)."""
    ws = make_workspace(tmp_path)
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Dana",
        GIT_AUTHOR_EMAIL="dana@example.com",
        GIT_COMMITTER_NAME="Dana",
        GIT_COMMITTER_EMAIL="dana@example.com",
        GIT_AUTHOR_DATE="2026-08-22T10:00:00Z",
        GIT_COMMITTER_DATE="2026-08-22T10:00:00Z",
    )
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "round half up"], cwd=ws, check=True, env=env)
    (ws / "invoicer" / "totals.py").write_text(TOTALS_BEFORE)
    result = run_capture("import", "claude-code", str(transcript(ws, "claude-code")))
    assert result.returncode == 0, result.stderr
    (episode,) = episodes_json(run_capture)
    (proposal,) = episode["proposals"]
    assert proposal["outcome"] == "kept"
    checkpoints = {c["window"]: (c["outcome"], c["via"]) for c in proposal["checkpoints"]}
    late = checkpoints.pop("late")
    assert set(checkpoints.values()) == {("kept", "git")}
    assert late == ("undone", "import")


def test_default_location_and_bad_lines(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    config_dir = tmp_path / "claude-config"
    project = config_dir / "projects" / "-tmp-invoicer"
    project.mkdir(parents=True)
    text = example_text("claude_code_transcript_sample.jsonl", ws)
    (project / "8f1c2a40.jsonl").write_text("not json\n" + text + "[1]\n")
    result = run_capture("import", "claude-code", env={"CLAUDE_CONFIG_DIR": str(config_dir)})
    assert result.returncode == 0, result.stderr
    assert "1 proposal(s)" in result.stdout and "2 unreadable line(s)" in result.stdout
    missing = run_capture("import", "codex", str(tmp_path / "nope"))
    assert missing.returncode != 0
    assert missing.stderr.startswith("capture: error: ") and "no such file" in missing.stderr
