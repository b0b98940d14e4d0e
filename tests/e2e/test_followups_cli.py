"""Through the real `capture hook claude-code`: the prompt a user sends after an episode is
kept as that episode's follow-up, with the rule that fired, shown by `capture show` and
counted by `capture report` per agent and model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import hook, no_agent_env  # noqa: F401 - autouse fixture

SESSION = "0d9c8b7a-6f5e-4d3c-2b1a-0f9e8d7c6b5a"


def test_a_dissatisfied_follow_up_is_kept_shown_and_counted(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = tmp_path / "app"
    (ws / ".git").mkdir(parents=True)

    def send(event: str, prompt_id: str, **fields: Any) -> None:
        payload = {
            "session_id": SESSION,
            "prompt_id": prompt_id,
            "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(ws),
            "hook_event_name": event,
            **fields,
        }
        hook(run_capture, "claude-code", payload, cwd=ws)

    send("UserPromptSubmit", "p1", prompt="add input validation to the signup form")
    send("Stop", "p1", stop_hook_active=False)
    send("UserPromptSubmit", "p2", prompt="It still doesnt seem to be working")
    send("Stop", "p2", stop_hook_active=False)

    episodes = sorted(episodes_json(run_capture), key=lambda e: e["started_at"])
    assert [e["prompt"] for e in episodes] == [
        "add input validation to the signup form",
        "It still doesnt seem to be working",
    ]
    first = episodes[0]["id"]
    shown = json.loads(run_capture("show", first, "--json", check=True).stdout)
    assert shown["follow_up"]["label"] == "dissatisfied"
    assert shown["follow_up"]["rule"] == "en-not-working"
    assert shown["follow_up"]["next_episode"] == episodes[1]["id"]
    assert "follow-up: dissatisfied" in run_capture("show", first, check=True).stdout

    report = json.loads(run_capture("report", "--json", check=True).stdout)
    (row,) = report["follow_ups"]
    assert (row["agent"], row["episodes_followed"], row["dissatisfied"]) == ("claude-code", 1, 1)
    assert row["share_dissatisfied"] == 1.0
