"""The real agent CLIs, from npm at the versions .ci/agents-setup pins, each in a fresh
repository and home where `capture install <agent>` wrote the hooks, driven by a scripted model
(tests/support/agents): what `capture` records must match each scenario's labelled truth.

Skipped when the CLIs are not installed (`.ci/agents-setup` installs them; CI runs it)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents.scenario import load
from tests.support.agents.sessions import Session
from tests.support.agents.truth import proposals_by_file, runs_of, settled

pytestmark = pytest.mark.agents

AGENTS = ["claude-code", "codex", "gemini"]


def run_scenario(
    agent: str, name: str, tmp_path: Path, capture_home: Path, windows: str | None = None
) -> tuple[Session, dict[str, Any]]:
    scenario = load(name)
    session = Session(agent, tmp_path, capture_home, scenario.get("files"), windows=windows)
    done = session.run(
        scenario["steps"], scenario["prompt"], deny_edits=scenario.get("deny_edits", False)
    )
    assert done.returncode == 0, f"{agent} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    for argv in scenario.get("after", []):
        subprocess.run(argv, cwd=session.repo, check=True, capture_output=True)
    return session, scenario


def check_files(recorded: dict[str, list[dict[str, Any]]], truth: dict[str, Any]) -> None:
    for file, expected in truth.items():
        if file.startswith("runs"):
            continue
        assert file in recorded, f"no proposal recorded for {file}: {sorted(recorded)}"
        assert len(recorded[file]) == 1, f"{file} recorded more than once: {recorded[file]}"
        proposal = recorded[file][0]
        got = {key: proposal[key] for key in expected}
        assert got == expected, f"{file}: {proposal}"


@pytest.mark.parametrize("agent", AGENTS)
def test_write_edit_then_keep_and_undo(agent: str, tmp_path: Path, capture_home: Path) -> None:
    # one window, long enough that the session ends inside it: the user's undo comes after the
    # agent stopped and before the outcome is measured
    session, scenario = run_scenario(agent, "keep_undo", tmp_path, capture_home, windows="20s")
    assert session.git("status", "--short", "calc.py") == ""
    recorded = proposals_by_file(settled(session))
    check_files(recorded, scenario["truth"])


@pytest.mark.parametrize("agent", AGENTS)
def test_tests_fail_then_pass(agent: str, tmp_path: Path, capture_home: Path) -> None:
    session, scenario = run_scenario(agent, "tests_fail_then_pass", tmp_path, capture_home)
    episodes = settled(session)
    check_files(proposals_by_file(episodes), scenario["truth"])
    runs = runs_of(episodes)
    got = [{key: run[key] for key in ("exit_code", "passed", "failed")} for run in runs]
    truth = scenario["truth"]
    assert got == truth.get(f"runs_{agent}", truth["runs"]), runs
    assert all("unittest" in run["command"] for run in runs)


@pytest.mark.parametrize("agent", AGENTS)
def test_denied_edit_is_rejected(agent: str, tmp_path: Path, capture_home: Path) -> None:
    if agent == "gemini":
        pytest.skip(
            "Gemini CLI 0.61 run headless without yolo fires no hook for an edit it may not make"
        )
    session, scenario = run_scenario(agent, "denied_edit", tmp_path, capture_home)
    assert session.git("status", "--short", "calc.py") == ""
    recorded = proposals_by_file(settled(session))
    check_files(recorded, scenario["truth"])
    if agent == "claude-code":
        # PostToolBatch carries the denial's words: the label rests on them
        proposal = recorded["calc.py"][0]
        assert proposal["decided_by"] == "denied", proposal
        assert "permission" in proposal["reason"] and "calc.py" in proposal["reason"], proposal


def test_codex_patch_through_its_shell_is_an_edit(tmp_path: Path, capture_home: Path) -> None:
    session, scenario = run_scenario("codex", "codex_shell_patch", tmp_path, capture_home)
    assert "def sub" in (session.repo / "calc.py").read_text()
    recorded = proposals_by_file(settled(session))
    check_files(recorded, scenario["truth"])
