"""What `capture` recorded for a real session, read the way a user reads it (`capture observe`
when the windows are due, then `capture episodes --json`), to be set beside a scenario's truth."""

from __future__ import annotations

import time
from typing import Any

from tests.support.agents.sessions import Session
from tests.support.hook_support import wait_for_queue

__all__ = ["proposals_by_file", "runs_of", "settled"]


def proposals_by_file(episodes: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for episode in episodes:
        for proposal in episode["proposals"]:
            found.setdefault(proposal["file"], []).append(proposal)
    return found


def runs_of(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    runs = {run["id"]: run for episode in episodes for run in episode["test_runs"]}
    return sorted(runs.values(), key=lambda run: run["started_at"])


def settled(session: Session, timeout: float = 90.0) -> list[dict[str, Any]]:
    """The session's episodes once every proposal has its final outcome (the hooks' queue
    applied, the due checkpoints observed)."""
    wait_for_queue(session.capture_home, timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        observed = session.capture("observe", "--quiet")
        assert observed.returncode == 0, observed.stderr
        episodes = session.episodes()
        proposals = [p for e in episodes for p in e["proposals"]]
        if all(p["outcome"] != "pending" for p in proposals):
            return episodes
        if time.monotonic() > deadline:
            raise AssertionError(f"outcomes still pending after {timeout} s: {proposals}")
        time.sleep(0.5)
