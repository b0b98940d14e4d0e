"""A Codex rollout's trajectory: its messages (the user's, the assistant's, and the context
Codex itself sends, marked) and every tool call with its arguments and its output, each in the
turn that was open when it happened. Read from the records `codex_rollout` has already parsed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from capture.hooks.agents.trajectory import Step, harness_kind, input_text
from capture.importers.records import History, Turn

__all__ = ["add_rollout_steps"]

_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
#: what a developer-role message is: the harness's instructions, never the user's words
_DEVELOPER = "developer"


def _message_text(payload: dict[str, Any]) -> str:
    content = payload.get("content")
    return "\n".join(
        str(b["text"])
        for b in (content if isinstance(content, list) else [])
        if isinstance(b, dict) and isinstance(b.get("text"), str)
    )


def _output_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _turn_at(turns: Sequence[Turn], at: float) -> Turn | None:
    found = None
    for turn in turns:
        if turn.at <= at:
            found = turn
    return found


def add_rollout_steps(
    history: History, records: Sequence[tuple[str | None, dict[str, Any], float]]
) -> None:
    """Fill `history.steps` from the rollout's (kind, payload, time) records, then name each
    turn's task."""
    calls: dict[str, tuple[str, Any, float]] = {}
    session = history.session_id
    for index, (kind, payload, at) in enumerate(records):
        if kind != "response_item":
            continue
        ptype = payload.get("type")
        key = f"{session}:{index}"
        if ptype == "message":
            role = payload.get("role")
            text = _message_text(payload)
            if not text:
                continue
            if role == "assistant":
                step = Step("assistant", at, key, text=text)
            else:
                harness = _DEVELOPER if role == _DEVELOPER else harness_kind(text)
                step = Step("user", at, key, text=text, harness=harness)
            history.steps.append((step, _turn_at(history.turns, at)))
        elif ptype in _CALLS:
            call_id = str(payload.get("call_id") or payload.get("id") or key)
            name = str(payload.get("name") or ptype)
            given = payload.get("arguments", payload.get("input", payload.get("action")))
            calls[call_id] = (name, given, at)
        elif ptype in _OUTPUTS:
            call_id = str(payload.get("call_id"))
            name, given, called = calls.pop(call_id, ("unknown", None, at))
            step = Step(
                "tool",
                called,
                f"{session}:{call_id}",
                text=_output_text(payload.get("output")),
                tool=name,
                call_id=call_id,
                input=input_text(given),
            )
            step.done_at = at
            history.steps.append((step, _turn_at(history.turns, called)))
    history.settle_tasks()
