"""Whether a hook payload can be read at all (its size, a JSON object in UTF-8), and what the
agent is answered when its protocol asks for an answer.

Used by `capture hook` in the agent's loop and by the queue's applier, so it imports only the
stdlib, and `json` only once there is something to parse.
"""

from __future__ import annotations

# Not `from typing import ...`: the hook's fast lane pays for every import it makes.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_PAYLOAD_BYTES", "PROMPT_REPLY", "parse_payload", "reply_for"]

#: Larger payloads are drained and dropped (logged): a hook must not stall on them.
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024

#: Cursor's beforeSubmitPrompt must answer; `continue` lets the prompt through unchanged.
PROMPT_REPLY = '{"continue": true}'


def reply_for(agent: str, event: str | None, raw: bytes) -> str | None:
    """What the agent expects on stdout for this call, decided without parsing JSON (unless
    the payload spells names with escapes)."""
    if agent != "cursor":
        return None
    if event == "beforeSubmitPrompt" or b'"beforeSubmitPrompt"' in raw:
        return PROMPT_REPLY
    if event is None and b"\\u" in raw and _escaped_prompt_event(raw):
        return PROMPT_REPLY
    return None


def _escaped_prompt_event(raw: bytes) -> bool:
    """The event name spelled with JSON escapes (`"before\\u0053ubmitPrompt"`): rare, so only
    then is the payload parsed."""
    import json

    try:
        payload = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(payload, dict) and payload.get("hook_event_name") == "beforeSubmitPrompt"


def parse_payload(raw: bytes, size: int, problems: list[str]) -> tuple[dict[str, Any], str] | None:
    """The payload as a JSON object and its text, or None with the reason in `problems`."""
    if size > MAX_PAYLOAD_BYTES:
        problems.append(f"payload of {size} bytes is over the {MAX_PAYLOAD_BYTES} byte limit")
        return None
    if not raw.strip():
        problems.append("empty payload")
        return None
    import json

    try:
        text = raw.decode("utf-8")
        payload = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        problems.append(f"payload is not JSON: {exc}")
        return None
    if not isinstance(payload, dict):
        problems.append(f"payload is a JSON {type(payload).__name__}, not an object")
        return None
    if "\\u" in text:
        # a lone surrogate escape ("\ud83d" without its pair) is valid JSON but no UTF-8 can
        # hold it: kept as the escape's own text, wherever in the payload it is
        from capture.hooks.agents.fields import escape_surrogates

        payload = escape_surrogates(payload)
    return payload, text
