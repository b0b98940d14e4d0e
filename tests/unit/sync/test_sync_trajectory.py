"""The trajectory and the task as they leave the machine: at the metrics level the count of
calls per tool and nothing the agent read; at the text levels the steps, with secrets and
identity scrubbed like the prompt's."""

from __future__ import annotations

import json

from sync.anonymize import Level, WorkspacePolicy
from tests.unit.sync.test_sync_anonymize import GHP, ROOT, anonymizer, episode


def _with_trajectory() -> dict:
    e = episode()
    read = f"{ROOT}/src/billing/invoice.py"
    e["task"] = "make invoice totals round half-up"
    e["task_source"] = "earlier-prompt"
    e["proposals"][0]["before_text"] = f'TOKEN = "{GHP}"\ndef total(): ...\n'
    e["proposals"][0]["before_via"] = "payload"
    step = {
        "kind": "tool",
        "at": e["started_at"],
        "tool": "Read",
        "call_id": "toolu_01",
        "input": json.dumps({"file_path": read}),
        "text": f'API_KEY = "{GHP}"  # alice@acme.io\n',
        "is_error": False,
        "harness": None,
        "subagent": None,
        "spawned": None,
        "path": read,
        "truncated": False,
    }
    e["trajectory"] = {"tool_calls": {"Read": 1}, "steps": [step], "truncated": False}
    return e


def _project(level: Level) -> dict:
    result = anonymizer().project(_with_trajectory(), WorkspacePolicy(level))
    assert result.episode is not None
    return result.episode


def test_the_metrics_level_sends_counts_and_tool_names_only() -> None:
    shared = _project(Level.METRICS)
    assert shared["trajectory"] == {"tool_calls": {"Read": 1}, "steps": [], "truncated": False}
    assert shared["task"] is None and shared["task_source"] == "earlier-prompt"
    assert shared["proposals"][0]["before_text"] is None
    text = json.dumps(shared)
    assert "invoice.py" not in text and GHP not in text and "alice" not in text


def test_the_text_levels_send_the_steps_scrubbed() -> None:
    for level in (Level.REDACTED, Level.FULL):
        shared = _project(level)
        (step,) = shared["trajectory"]["steps"]
        assert step["tool"] == "Read" and step["kind"] == "tool"
        assert "API_KEY" in step["text"]
        assert shared["task"] == "make invoice totals round half-up"
        assert "def total()" in shared["proposals"][0]["before_text"]
        text = json.dumps(shared)
        assert GHP not in text and "alice@acme.io" not in text and "/home/alice" not in text
        if level is Level.REDACTED:
            assert step["call_id"] != "toolu_01"
