"""Explicit decisions meet the edits of their call in whatever order they arrive: a reject
before the pre-tool-use call is applied, an accept before the post-tool-use call, a reject
after the turn's end inferred a denial (the explicit source replaces the inferred one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capture.config import load_config
from capture.hooks.agents import read_payload
from capture.hooks.ingest import ingest
from capture.recording.recorder import Recorder
from capture.store.database import Store
from capture.store.decision_rows import DecisionRow, decisions_of_proposals

SESSION = "sess-1"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Store, Any, Path]:
    monkeypatch.setenv("CAPTURE_HOME", str(tmp_path / "home"))
    config = load_config()
    store = Store.open(config.paths.db)
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.py").write_text("x = 1\n")
    return store, config, ws


def call(world: tuple[Store, Any, Path], event: str, call_id: str, **more: Any) -> None:
    store, config, ws = world
    payload = {
        "session_id": SESSION,
        "cwd": str(ws),
        "hook_event_name": event,
        "tool_name": "Edit",
        "tool_input": {"file_path": str(ws / "a.py"), "old_string": "x = 1", "new_string": "x = 2"},
        "tool_use_id": call_id,
        **more,
    }
    if event == "Stop":
        payload = {"session_id": SESSION, "cwd": str(ws), "hook_event_name": "Stop"}
    reading = read_payload("claude-code", payload, {}, event)
    ingest(store, config, reading, json.dumps(payload), now=100.0, fallback_cwd=str(ws))


def decide(world: tuple[Store, Any, Path], call_id: str, decision: str, source: str) -> None:
    store, config, _ = world
    row = DecisionRow(
        agent="claude-code",
        session_id=SESSION,
        call_id=call_id,
        tool="Edit",
        decision=decision,
        source=source,
        explicit=source.startswith("user_"),
        origin="otel",
        at=101.0,
    )
    Recorder(store, config).explicit_decision(row, now=101.0)


def proposals(store: Store) -> list[tuple[str, str, str | None]]:
    rows = store.conn.execute("SELECT id, state, decided_by FROM proposals").fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def test_a_reject_before_the_announcement_is_applied_when_it_comes(world: Any) -> None:
    decide(world, "toolu_1", "reject", "user_reject")
    assert proposals(world[0]) == []
    call(world, "PreToolUse", "toolu_1")
    ((pid, state, by),) = proposals(world[0])
    assert (state, by) == ("rejected", "user_reject")
    assert [d.source for d in decisions_of_proposals(world[0].conn, [pid])[pid]] == ["user_reject"]


def test_an_explicit_reject_replaces_the_denial_inferred_at_the_turns_end(world: Any) -> None:
    call(world, "PreToolUse", "toolu_2")
    call(world, "Stop", "-")
    assert [(s, b) for _, s, b in proposals(world[0])] == [("rejected", "denied")]
    decide(world, "toolu_2", "reject", "user_abort")
    assert [(s, b) for _, s, b in proposals(world[0])] == [("rejected", "user_abort")]


def test_an_accept_waits_for_the_edit_and_is_linked_to_it(world: Any) -> None:
    store, _, ws = world
    call(world, "PreToolUse", "toolu_3")
    decide(world, "toolu_3", "accept", "hook")
    assert proposals(store) == []  # an accept never makes an edit of an announcement
    (ws / "a.py").write_text("x = 2\n")
    call(world, "PostToolUse", "toolu_3", tool_response={"filePath": str(ws / "a.py")})
    ((pid, state, by),) = proposals(store)
    assert (state, by) == ("applied", "hook")
    (linked,) = decisions_of_proposals(store.conn, [pid])[pid]
    assert (linked.decision, linked.explicit) == ("accept", False)


def test_a_decision_without_a_call_id_is_kept_unlinked(world: Any) -> None:
    store, config, _ = world
    row = DecisionRow("gemini", SESSION, None, "replace", "modify", "user", True, "otel", 5.0)
    assert Recorder(store, config).explicit_decision(row, now=5.0) is None
    assert store.conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 1
