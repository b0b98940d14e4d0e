"""What the agent saw and did, step by step, and the task its work answers.

A `Step` is one entry of an episode's trajectory: a user message, the assistant's text, or one
tool call with its input and its result. Transcripts, rollouts and hook payloads are read into
steps by their agent's reader; this module holds what every reader shares: which user-role
texts the harness wrote (`harness_kind`), which ones only say "go on" (`is_continuation`), and
which text of a turn is its task (`task_of`).

Pure: texts in, decisions out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "TASK_SOURCES",
    "Step",
    "harness_kind",
    "hook_steps",
    "original_file",
    "input_text",
    "is_continuation",
    "task_of",
]

#: where an episode's task statement came from
TASK_SOURCES = ("prompt", "earlier-prompt", "tool-result", "plan-file", "subagent-prompt")


class Step:
    """One entry of a trajectory. `kind`: user, assistant or tool. `text`: a message's text
    (user, assistant) or a tool's result. `input`: a tool call's input as JSON text. `harness`:
    for a user-role text the harness wrote, what it is (e.g. `task-notification`); such a text is
    kept, marked, and never taken for the user's words. `parent`: for a step of a subagent, the
    subagent's id, which the call that started it names as `spawned`."""

    __slots__ = (
        "kind",
        "at",
        "key",
        "text",
        "tool",
        "call_id",
        "input",
        "is_error",
        "harness",
        "parent",
        "path",
        "spawned",
        "done_at",
    )

    def __init__(
        self,
        kind: str,
        at: float,
        key: str,
        *,
        text: str | None = None,
        tool: str | None = None,
        call_id: str | None = None,
        input: str | None = None,
        is_error: bool = False,
        harness: str | None = None,
        parent: str | None = None,
        path: str | None = None,
    ) -> None:
        self.kind = kind
        self.at = at
        self.key = key
        self.text = text
        self.tool = tool
        self.call_id = call_id
        self.input = input
        self.is_error = is_error
        self.harness = harness
        self.parent = parent
        self.path = path
        # a subagent call: the id its side chain carries
        self.spawned: str | None = None
        # when the result came back
        self.done_at: float | None = None

    def __repr__(self) -> str:
        return f"Step({self.kind!r}, {self.tool or ''!r}, {(self.text or '')[:30]!r})"


def input_text(value: Any) -> str | None:
    """A tool call's input as the JSON text kept for it (keys in the agent's order)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


#: the tags Claude Code and its kin wrap their own user-role messages in
_HARNESS_TAGS = re.compile(
    r"^\s*<(task-notification|command-message|command-name|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|system-reminder|user-prompt-submit-hook|"
    r"environment_context|user_instructions|bash-stdout|bash-stderr|turn_aborted)\b"
)
_HARNESS_PREFIXES = (
    ("Caveat: The messages below were generated", "local-command-caveat"),
    ("This session is being continued from a previous conversation", "compact-summary"),
    ("[Request interrupted by user", "interruption"),
    ("<subagent_notification>", "subagent-notification"),
    ("# AGENTS.md instructions", "agents-md"),
)


def harness_kind(text: str | None) -> str | None:
    """What a user-role text is when the harness wrote it, or None for the user's own words."""
    if not text:
        return None
    found = _HARNESS_TAGS.match(text)
    if found:
        return found.group(1).replace("_", "-")
    stripped = text.lstrip()
    for prefix, kind in _HARNESS_PREFIXES:
        if stripped.startswith(prefix):
            return kind
    return None


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WORDS = re.compile(r"[a-z']+")
_GO_ON_FIRST = frozenset(
    [
        "continue",
        "proceed",
        "go",
        "yes",
        "y",
        "yep",
        "yeah",
        "ok",
        "okay",
        "keep",
        "carry",
        "resume",
        "next",
        "sure",
        "do",
        "please",
        "k",
        "kk",
        "sounds",
        "lgtm",
        "great",
        "good",
        "thanks",
        "thank",
        "cool",
        "perfect",
        "fine",
        "right",
        "alright",
    ]
)
_GO_ON_ALONE = frozenset(
    [
        "continue",
        "proceed",
        "yes",
        "y",
        "yep",
        "yeah",
        "ok",
        "okay",
        "next",
        "sure",
        "lgtm",
        "k",
        "kk",
        "go",
        "resume",
    ]
)
_SUBSTANCE = frozenset(
    [
        "fix",
        "add",
        "remove",
        "delete",
        "implement",
        "write",
        "create",
        "rename",
        "refactor",
        "test",
        "tests",
        "bug",
        "error",
        "but",
        "instead",
        "change",
        "update",
        "file",
        "function",
        "class",
        "why",
        "what",
        "how",
    ]
)


def is_continuation(text: str | None) -> bool:
    """A prompt that only says to go on ("continue", "go on", "yes", "continue until all are
    done"): it names no task of its own."""
    if text is None:
        return True
    words = _WORDS.findall(_CONTROL.sub("", text).lower())
    if not words:
        return True
    if len(words) == 1:
        return words[0] in _GO_ON_ALONE or words[0] in _GO_ON_FIRST
    return len(words) <= 6 and words[0] in _GO_ON_FIRST and not (_SUBSTANCE & set(words))


#: a prompt that sends the agent to an issue tracker for the work: the task is in the result
_TRACKER = re.compile(
    r"\b(bd|bead|beads|gh issue|issues?|backlog|jira|linear|ticket|task)\b"
    r"[^\n]{0,60}\b(show|view|get|read|open)\b|\b(bd show|gh issue view|backlog task)\b",
    re.IGNORECASE,
)
_TRACKER_COMMAND = re.compile(
    r"\b(bd\s+show|gh\s+issue\s+view|glab\s+issue\s+view|backlog\s+task|jira\s+issue|"
    r"linear\s+issue|issues\s+show)\b"
)
_PLAN_FILE = re.compile(r"(plan|todo|tasks?|spec|prd|backlog)[^/]*\.(md|txt|org)$", re.IGNORECASE)


def _own_words(step: Step) -> str | None:
    if step.kind != "user" or step.harness or step.parent:
        return None
    return step.text


def _command_of(step: Step) -> str:
    if not step.input:
        return ""
    try:
        value = json.loads(step.input)
    except ValueError:
        return step.input
    if isinstance(value, dict):
        command = value.get("command") or value.get("cmd")
        if isinstance(command, list):
            return " ".join(str(c) for c in command)
        if isinstance(command, str):
            return command
    return ""


def _tracker_result(steps: Sequence[Step]) -> str | None:
    for step in steps:
        if (
            step.kind == "tool"
            and step.text
            and not step.is_error
            and _TRACKER_COMMAND.search(_command_of(step))
        ):
            return step.text
    return None


def _plan_read(steps: Sequence[Step]) -> str | None:
    for step in steps:
        if step.kind == "tool" and step.path and step.text and _PLAN_FILE.search(step.path):
            return step.text
    return None


def task_of(earlier: Sequence[Step], turn: Sequence[Step]) -> tuple[str, str] | tuple[None, None]:
    """The task statement of a turn and where it came from (one of `TASK_SOURCES`).

    `earlier`: the session's steps before the turn; `turn`: the turn's own steps, in order. A
    prompt that names the work is the task; one that sends the agent to an issue tracker makes
    the tracker's output it read the task; one that only says to go on walks back to the last
    earlier prompt that named work. A subagent's turn answers the prompt it was started with;
    with no words of the user at all, a plan file the agent read is the task."""
    prompt = next((t for t in map(_own_words, turn) if t is not None), None)
    if prompt is not None and not is_continuation(prompt):
        if _TRACKER.search(prompt):
            found = _tracker_result(turn)
            if found:
                return found, "tool-result"
        return prompt, "prompt"
    for step in reversed(earlier):
        text = _own_words(step)
        if text is not None and not is_continuation(text):
            if _TRACKER.search(text):
                found = _tracker_result(earlier)
                if found:
                    return found, "tool-result"
            return text, "earlier-prompt"
    sub = next(
        (s.text for s in [*earlier, *turn] if s.kind == "user" and s.parent and s.text), None
    )
    if sub and not harness_kind(sub):
        return sub, "subagent-prompt"
    plan = _plan_read([*earlier, *turn])
    if plan:
        return plan, "plan-file"
    return None, None


#: hook events that carry a tool call's result, and the one that carries a typed prompt
_RESULT_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "postToolUse"})
_PROMPT_EVENTS = frozenset({"UserPromptSubmit", "beforeSubmitPrompt"})


def _result_text(tool: str, response: Any) -> str | None:
    """What the agent got back from a tool, as text: a Read's file text, a shell's output,
    otherwise the response as JSON."""
    if response is None:
        return None
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        found = response.get("file")
        if isinstance(found, dict) and isinstance(found.get("content"), str):
            return str(found["content"])
        if "stdout" in response or "stderr" in response:
            parts = [response.get("stdout"), response.get("stderr")]
            return "\n".join(p for p in parts if isinstance(p, str) and p)
    return json.dumps(response, ensure_ascii=False)


def hook_steps(payload: Any, at: float) -> list[Step]:
    """The steps one hook payload shows (Claude Code's shape, which Codex shares): a typed
    prompt, or a tool call with its input and its result. Keyed as a transcript's steps are
    where the payload names the call, so a later import of the transcript adds none twice."""
    if not isinstance(payload, dict):
        return []
    event = payload.get("hook_event_name")
    session = payload.get("session_id") or payload.get("conversation_id")
    if event in _PROMPT_EVENTS:
        text = payload.get("prompt")
        if not isinstance(text, str):
            return []
        key = f"{session}:prompt:{payload.get('prompt_id') or at}"
        return [Step("user", at, key, text=text, harness=harness_kind(text))]
    if event not in _RESULT_EVENTS:
        return []
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        return []
    given = payload.get("tool_input")
    failed = event == "PostToolUseFailure"
    response = payload.get("error") if failed else payload.get("tool_response")
    call_id = payload.get("tool_use_id")
    key = f"{session}:{call_id}" if call_id else f"{session}:{tool}:{at}"
    path = None
    if isinstance(given, dict):
        for name in ("file_path", "notebook_path", "path"):
            if isinstance(given.get(name), str):
                path = given[name]
                break
    step = Step(
        "tool",
        at,
        key,
        text=_result_text(tool, response),
        tool=tool,
        call_id=call_id if isinstance(call_id, str) else None,
        input=input_text(given),
        is_error=failed,
        path=path,
    )
    if isinstance(response, dict) and isinstance(response.get("agentId"), str):
        step.spawned = response["agentId"]
    step.done_at = at
    return [step]


#: where a tool's response keeps the whole file as the edit found it (Claude Code 2.x, 1.0.x)
_ORIGINAL_FIELDS = ("originalFile", "originalFileContents")


def original_file(payload: Any) -> str | None:
    """The whole file before the edit a hook payload reports, when the payload carries it."""
    if not isinstance(payload, dict):
        return None
    response = payload.get("tool_response")
    if not isinstance(response, dict):
        return None
    for name in _ORIGINAL_FIELDS:
        if isinstance(response.get(name), str):
            return str(response[name])
    return None
