"""Each agent's telemetry events read into decisions on its tool calls (pure).

The event names and attributes are the ones the agents document (docs/telemetry.md lists them
with their sources); an event of a known name without the attributes a decision needs is *not
understood* (counted, answered as a partial success), an event of any other name is simply not
ours to read. Whether a person decided is the agent's own word: Claude Code's `source` (`user_*`
against `config` and `hook`), Codex's (`user` against `config` and an automated reviewer),
Gemini CLI's `auto_accept`; Copilot's edit outcomes are a person's clicks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from capture.telemetry.events import Decision, TelemetryEvent

__all__ = ["KNOWN_EVENTS", "Reading", "read_events", "translate"]


class NotUnderstood(Exception):
    """A known event that lacks what a decision needs."""


def _names(event: TelemetryEvent) -> set[str]:
    names = {event.name, str(event.attributes.get("event.name") or "")}
    if isinstance(event.body, str):
        names.add(event.body.split(":")[0].strip())
    return {n for n in names if n}


def _text(attributes: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def _truthy(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


# -- Claude Code ---------------------------------------------------------------------------------

_CLAUDE_DECISIONS = {"accept": "accept", "reject": "reject"}


def _claude_decision(event: TelemetryEvent) -> Decision:
    a = event.attributes
    decision = _CLAUDE_DECISIONS.get(str(a.get("decision", "")).lower())
    if decision is None:
        raise NotUnderstood(f"tool_decision without a known decision: {a.get('decision')!r}")
    source = _text(a, "source", "decision_source")
    return Decision(
        agent="claude-code",
        decision=decision,
        explicit=bool(source and source.startswith("user_")),
        source=source,
        session_id=_text(a, "session.id"),
        call_id=_text(a, "tool_use_id", "tool.use_id", "tool_use.id"),
        tool=_text(a, "tool_name"),
        at=event.at,
    )


def _claude_result(event: TelemetryEvent) -> Decision | None:
    """A tool result names the decision that let the tool run (`decision_type`,
    `decision_source`); a result without them says nothing about a decision."""
    a = event.attributes
    kind = str(a.get("decision_type") or a.get("decision") or "").lower()
    if kind not in _CLAUDE_DECISIONS:
        if "success" not in a:
            raise NotUnderstood("tool_result without success or a decision")
        return None
    source = _text(a, "decision_source", "source")
    detail: dict[str, Any] = {}
    success = _truthy(a.get("success"))
    if success is not None:
        detail["success"] = success
    return Decision(
        agent="claude-code",
        decision=_CLAUDE_DECISIONS[kind],
        explicit=bool(source and source.startswith("user_")),
        source=source,
        session_id=_text(a, "session.id"),
        call_id=_text(a, "tool_use_id", "tool.use_id", "tool_use.id"),
        tool=_text(a, "tool_name"),
        at=event.at,
        detail=detail,
    )


# -- Codex -------------------------------------------------------------------------------------

_CODEX_DECISIONS = {
    "approved": "accept",
    "approved_for_session": "accept",
    "approved_execpolicy_amendment": "accept",
    "denied": "reject",
    "abort": "reject",
}


def _codex_decision(event: TelemetryEvent) -> Decision:
    a = event.attributes
    raw = str(a.get("decision", "")).lower()
    decision = _CODEX_DECISIONS.get(raw)
    if decision is None:
        raise NotUnderstood(f"codex.tool_decision without a known decision: {raw!r}")
    source = _text(a, "source")
    return Decision(
        agent="codex",
        decision=decision,
        explicit=(source or "").lower() == "user",
        source=source,
        session_id=_text(a, "conversation.id", "session.id", "thread.id"),
        call_id=_text(a, "call_id"),
        tool=_text(a, "tool_name"),
        at=event.at,
        detail={"decision": raw},
    )


# -- Gemini CLI ----------------------------------------------------------------------------------

_GEMINI_DECISIONS = {
    "accept": ("accept", True),
    "reject": ("reject", True),
    "modify": ("modify", True),
    "auto_accept": ("accept", False),
}


def _gemini_call(event: TelemetryEvent) -> Decision | None:
    a = event.attributes
    raw = str(a.get("decision") or "").lower()
    if not raw:
        return None  # a call no one was asked about (a read-only tool)
    if raw not in _GEMINI_DECISIONS:
        raise NotUnderstood(f"gemini_cli.tool_call with an unknown decision: {raw!r}")
    decision, explicit = _GEMINI_DECISIONS[raw]
    detail: dict[str, Any] = {"prompt_id": a["prompt_id"]} if "prompt_id" in a else {}
    metadata = a.get("metadata")
    if isinstance(metadata, dict):
        # what the user changed before a `modify` applied, as Gemini CLI counts it
        for key in ("user_added_lines", "user_removed_lines", "model_added_lines"):
            if key in metadata:
                detail[key] = metadata[key]
    return Decision(
        agent="gemini",
        decision=decision,
        explicit=explicit,
        source="user" if explicit else "auto_accept",
        session_id=_text(a, "session.id"),
        call_id=_text(a, "call_id", "tool_call_id"),
        tool=_text(a, "function_name"),
        at=event.at,
        detail=detail,
    )


# -- Copilot Chat --------------------------------------------------------------------------------

_COPILOT_OUTCOMES = {"accepted": "accept", "rejected": "reject", "accept": "accept"}
_COPILOT_OUTCOMES["reject"] = "reject"


def _copilot_edit(event: TelemetryEvent) -> Decision:
    a = event.attributes
    raw = str(a.get("outcome", "")).lower()
    if raw not in _COPILOT_OUTCOMES:
        raise NotUnderstood(f"copilot edit outcome not known: {raw!r}")
    names = _names(event)
    detail: dict[str, Any] = {
        k: a[k] for k in ("edit_surface", "line_count", "lines_added") if k in a
    }
    return Decision(
        agent="copilot",
        decision=_COPILOT_OUTCOMES[raw],
        explicit=True,
        source="user_hunk" if "copilot_chat.edit.hunk.action" in names else "user_edit",
        session_id=_text(a, "session.id", "gen_ai.conversation.id"),
        call_id=_text(a, "request_id"),
        tool="edit",
        at=event.at,
        detail=detail,
    )


def _copilot_inline(event: TelemetryEvent) -> Decision:
    accepted = _truthy(event.attributes.get("accepted"))
    if accepted is None:
        names = " ".join(_names(event))
        if "rejected" not in names and "accepted" not in names and not isinstance(event.body, str):
            raise NotUnderstood("copilot_chat.inline.done without accepted")
        accepted = "accepted" in str(event.body)
    return Decision(
        agent="copilot",
        decision="accept" if accepted else "reject",
        explicit=True,
        source="user_inline",
        session_id=_text(event.attributes, "session.id"),
        call_id=_text(event.attributes, "request_id"),
        tool="inline",
        at=event.at,
    )


#: event name -> translator; a translator returns None for an event that decides nothing.
KNOWN_EVENTS: dict[str, Callable[[TelemetryEvent], Decision | None]] = {
    "claude_code.tool_decision": _claude_decision,
    "tool_decision": _claude_decision,
    "claude_code.tool_result": _claude_result,
    "tool_result": _claude_result,
    "codex.tool_decision": _codex_decision,
    "gemini_cli.tool_call": _gemini_call,
    "copilot_chat.edit.feedback": _copilot_edit,
    "copilot_chat.edit.hunk.action": _copilot_edit,
    "copilot_chat.inline.done": _copilot_inline,
}


@dataclass(slots=True)
class Reading:
    decisions: list[Decision] = field(default_factory=list)
    understood: int = 0
    not_understood: int = 0
    problems: list[str] = field(default_factory=list)


def translate(event: TelemetryEvent) -> Decision | None:
    """The decision one event reports (None: it reports none); raises NotUnderstood."""
    for name in sorted(_names(event)):
        reader = KNOWN_EVENTS.get(name)
        if reader is not None:
            return reader(event)
    return None


def read_events(events: Iterable[TelemetryEvent]) -> Reading:
    reading = Reading()
    for event in events:
        try:
            decision = translate(event)
        except NotUnderstood as exc:
            reading.not_understood += 1
            if len(reading.problems) < 5:
                reading.problems.append(str(exc)[:200])
            continue
        reading.understood += 1
        if decision is not None:
            reading.decisions.append(decision)
    return reading
