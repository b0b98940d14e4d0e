"""The real agent CLIs, from npm at the versions .ci/agents-setup pins, each in a fresh
repository and home where `capture install <agent>` wrote the hooks, driven by a scripted model
(tests/support/agents): what `capture` records must match each scenario's labelled truth.

Skipped when the CLIs are not installed (`.ci/agents-setup` installs them; CI runs it)."""

from __future__ import annotations

import json
import subprocess
import sys
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
    """The runs with their counts, the fix kept; and, for the agents with a history to import,
    the import of this same session matches its live record."""
    session, scenario = run_scenario(agent, "tests_fail_then_pass", tmp_path, capture_home)
    episodes = settled(session)
    check_files(proposals_by_file(episodes), scenario["truth"])
    runs = runs_of(episodes)
    got = [{key: run[key] for key in ("exit_code", "passed", "failed")} for run in runs]
    truth = scenario["truth"]
    assert got == truth.get(f"runs_{agent}", truth["runs"]), runs
    assert all("unittest" in run["command"] for run in runs)
    if agent in HISTORY:
        check_import(session, episodes, tmp_path)


@pytest.mark.parametrize("agent", AGENTS)
def test_denied_edit_is_rejected(agent: str, tmp_path: Path, capture_home: Path) -> None:
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


def _signature(episodes: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a proposal says the agent did, whoever recorded it: the file, the tool, the state
    and the text it added (the hook keeps a line the agent repeated around its change, the
    import's diff of the file leaves it out: the added text is compared without it)."""
    return sorted(
        (p["file"], p["tool"], p["state"], "".join(h["new_text"] for h in p["hunks"]).strip())
        for e in episodes
        for p in e["proposals"]
    )


def _same_proposals(imported: list[tuple[Any, ...]], live: list[tuple[Any, ...]]) -> None:
    assert len(imported) == len(live), (imported, live)
    for mine, theirs in zip(imported, live, strict=True):
        assert mine[:3] == theirs[:3], (imported, live)
        assert mine[3] in theirs[3] or theirs[3] in mine[3], (imported, live)


#: where each agent keeps the transcript or rollout `capture import` reads
HISTORY = {"claude-code": ".claude/projects", "codex": ".codex/sessions"}


def check_import(session: Session, live: list[dict[str, Any]], tmp_path: Path) -> None:
    """Importing the transcript or rollout the session wrote adds nothing to what its live
    hooks recorded, and, alone in another store, gives the same proposals."""
    agent = session.agent
    (transcript,) = (session.home / HISTORY[agent]).rglob("*.jsonl")
    imported = session.capture("import", agent, str(transcript), "--quiet")
    assert imported.returncode == 0, imported.stderr
    assert _signature(session.episodes()) == _signature(live)  # nothing twice
    alone = dict(session.env, CAPTURE_HOME=str(tmp_path / "import-only"))
    done = subprocess.run(
        [*_capture(), "import", agent, str(transcript), "--quiet"],
        cwd=session.repo,
        env=alone,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [*_capture(), "episodes", "--json"], env=alone, capture_output=True, text=True, timeout=60
    )
    _same_proposals(_signature(json.loads(listed.stdout)), _signature(live))


def _capture() -> list[str]:
    return [sys.executable, "-m", "capture"]
