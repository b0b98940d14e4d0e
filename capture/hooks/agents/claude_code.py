"""Claude Code hook payloads (hooks reference and Agent SDK tool output types).

Edits: Edit, Write and the legacy MultiEdit; PostToolUse carries `tool_response` with
`structuredPatch` and `originalFile`. Rejections: a PreToolUse with no PostToolUse for its
`tool_use_id` (denied at the permission prompt), or a PostToolUseFailure. Commands: Bash and
PowerShell; PostToolUse means the command was counted a success (exit 0), PostToolUseFailure's
`error` begins with "Exit code N". Episodes: `session_id` and `prompt_id` (v2.1.196+).

Format generations, by the field names each wrote (seen in public hook logs and transcripts):
- the file before an edit: `originalFileContents` (1.0.x, kept longest by MultiEdit), then
  `originalFile` (later 1.0.x and 2.x); ORIGINAL_FILE reads both;
- a failed Bash result: just the command's output (1.0.5x-1.0.7x transcripts), later
  "Error: Exit code N" and then the output;
- `permission_mode` and `tool_use_id` in hook payloads (2.x; 1.0.x sent neither).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capture.hooks.agents.facts import (
    Call,
    Command,
    Edit,
    Fact,
    Prompt,
    Reading,
    Resolved,
    SessionStart,
    Stage,
    TurnEnd,
)
from capture.hooks.agents.fields import absolute, content_key, exit_code_in, first_text, number
from capture.hooks.agents.patches import structured_patch_hunks
from capture.model import HunkInput

__all__ = [
    "AGENT",
    "EDIT_TOOLS",
    "ORIGINAL_FILE",
    "SHELL_TOOLS",
    "after_of",
    "edits_of",
    "original_of",
    "read",
]

AGENT = "claude-code"
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit"})
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
#: the names the file before an edit has had in tool results, newest first
ORIGINAL_FILE = ("originalFile", "originalFileContents")


def original_of(response: Any) -> str | None:
    """The file before the edit, under whichever name the result gives it."""
    return _original(response)[1] if isinstance(response, dict) else None


def _original(response: dict[str, Any]) -> tuple[bool, str | None]:
    """Whether the result names the file before the edit at all, and its text (None: there
    was no file)."""
    for name in ORIGINAL_FILE:
        if name in response:
            value = response[name]
            return True, value if isinstance(value, str) else None
    return False, None


def after_of(tool: str, tool_input: Any, result: Any) -> str | None:
    """The whole file right after an Edit/Write/MultiEdit, when the result lets it be worked
    out (the file before the edit and the replacements)."""
    if not isinstance(tool_input, dict):
        return None
    result = result if isinstance(result, dict) else {}
    if tool == "Write":
        return first_text(tool_input, "content") or first_text(result, "content")
    _, original = _original(result)
    if original is None:
        return None
    if tool == "MultiEdit":
        edits = tool_input.get("edits")
        steps = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else []
    else:
        new = first_text(result, "newString")
        steps = [
            {
                "old_string": first_text(result, "oldString") or tool_input.get("old_string"),
                "new_string": new if new is not None else tool_input.get("new_string"),
                "replace_all": tool_input.get("replace_all") or result.get("replaceAll"),
            }
        ]
    text = original
    for step in steps:
        old, new = step.get("old_string"), step.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
            return None
        text = text.replace(old, new) if step.get("replace_all") else text.replace(old, new, 1)
    return text


def _call(payload: dict[str, Any], env: Mapping[str, str], event: str | None) -> Call:
    roots = tuple(r for r in (env.get("CLAUDE_PROJECT_DIR"),) if r)
    return Call(
        agent=AGENT,
        event=event or first_text(payload, "hook_event_name", "hookEventName") or "",
        session_id=first_text(payload, "session_id", "sessionId"),
        turn_id=first_text(payload, "prompt_id", "promptId"),
        model=first_text(payload, "model"),
        cwd=first_text(payload, "cwd"),
        roots=roots,
        agent_version=first_text(payload, "version"),
    )


def _first_line(patch: Any) -> int | None:
    """The new-file line of the first changed line of a structuredPatch."""
    for hunk in structured_patch_hunks(patch):
        return hunk.line
    return None


def edits_of(
    tool: str,
    tool_input: Any,
    response: Any,
    *,
    stage: Stage,
    tool_use_id: str | None,
    cwd: str | None,
    session_id: str | None = None,
) -> list[Edit]:
    """The edit an Edit/Write/MultiEdit call makes (also used by the transcript importer, whose
    tool results carry the same structured object as the hook's tool_response)."""
    if not isinstance(tool_input, dict):
        return []
    response = response if isinstance(response, dict) else {}
    path = first_text(tool_input, "file_path", "filePath", "path") or first_text(
        response, "filePath", "file_path"
    )
    if not path:
        return []
    path = absolute(path, cwd)
    patch = response.get("structuredPatch")
    hunks: list[HunkInput]
    written = original = None
    created = vague = False
    if tool == "Write":
        named, original = _original(response)
        written = first_text(tool_input, "content")
        if written is None:
            written = first_text(response, "content")
        if written is None:
            return []
        created = response.get("type") == "create" or (named and original is None)
        if created:
            hunks = [HunkInput("", written, line=1)]
        elif isinstance(patch, list) and patch:
            hunks = structured_patch_hunks(patch)
        else:
            # worked out against the old text by the shell; until then, the whole file
            hunks = [HunkInput(original or "", written, start=0)]
            vague = original is None
    elif tool == "MultiEdit":
        edits = tool_input.get("edits")
        if not isinstance(edits, list):
            return []
        hunks = [
            HunkInput(e.get("old_string", ""), e.get("new_string", ""))
            for e in edits
            if isinstance(e, dict)
            and isinstance(e.get("new_string", ""), str)
            and isinstance(e.get("old_string", ""), str)
        ]
        if isinstance(patch, list) and patch and any(not h.new_text for h in hunks):
            hunks = structured_patch_hunks(patch)
    else:
        old = first_text(response, "oldString") or first_text(tool_input, "old_string") or ""
        # userModified: the user changed the proposed text before accepting it; the response
        # holds what was written
        new = first_text(response, "newString")
        if new is None:
            new = first_text(tool_input, "new_string") or ""
        replace_all = bool(tool_input.get("replace_all") or response.get("replaceAll"))
        if (replace_all or not new) and isinstance(patch, list) and patch:
            hunks = structured_patch_hunks(patch)
        else:
            hunks = [HunkInput(old, new, line=_first_line(patch))]
    key_id = tool_use_id or content_key(session_id, tool, path, repr(tool_input)[:4096])
    return [
        Edit(
            path=path,
            hunks=hunks,
            stage=stage,
            key=f"{AGENT}:{key_id}:{path}",
            tool=tool,
            tool_use_id=tool_use_id,
            created_file=created,
            written=written,
            original=original,
            vague=vague,
        )
    ]


def _command(
    tool_input: Any, response: Any, *, failed: str | None, tool_use_id: str | None, payload: Any
) -> Command | None:
    if not isinstance(tool_input, dict):
        return None
    command = first_text(tool_input, "command")
    if not command:
        return None
    duration = number(payload, "duration_ms")
    key = f"{AGENT}:{tool_use_id or content_key(command, payload.get('session_id'))}"
    if failed is not None:
        # "Exit code N" then the output; without that line the command never ran to the end
        first, _, rest = failed.partition("\n")
        code = exit_code_in(first)
        failure = None
        if code is None:
            failure = "interrupted" if payload.get("is_interrupt") else "did not start"
        return Command(
            command,
            key,
            output=rest if code is not None else failed,
            exit_code=code,
            duration_s=_seconds(duration),
            failure=failure,
        )
    if tool_input.get("run_in_background"):
        return None  # returned before the command finished
    if isinstance(response, str):
        return Command(command, key, output=response, duration_s=_seconds(duration))
    response = response if isinstance(response, dict) else {}
    output = "".join(
        part
        for part in (first_text(response, "stdout", "output"), first_text(response, "stderr"))
        if part
    )
    if response.get("interrupted") or response.get("killed"):
        return Command(
            command, key, output=output, duration_s=_seconds(duration), failure="interrupted"
        )
    given = number(response, "exitCode", "exit_code")
    return Command(
        command,
        key,
        output=output,
        # PostToolUse fires only for calls Claude Code counted valid: exit 0 for a test runner
        exit_code=int(given) if given is not None else 0,
        duration_s=_seconds(duration),
    )


def _seconds(ms: float | None) -> float | None:
    return None if ms is None else ms / 1000


def _tool_facts(call: Call, payload: dict[str, Any], item: dict[str, Any]) -> list[Fact]:
    tool = first_text(item, "tool_name") or ""
    tool_use_id = first_text(item, "tool_use_id")
    tool_input = item.get("tool_input")
    event = call.event
    if tool in EDIT_TOOLS and event == "PostToolBatch":
        # the batch lists every call with its result: an edit that ran has its PostToolUse; a
        # denied one (no PostToolUse, no PermissionDenied) has only this, its result the
        # denial's text (2.1.19x)
        response = item.get("tool_response")
        if not isinstance(response, str):
            return []
        edits = edits_of(
            tool,
            tool_input,
            None,
            stage=Stage.FAILED,
            tool_use_id=tool_use_id,
            cwd=call.cwd,
            session_id=call.session_id,
        )
        for edit in edits:
            edit.error, edit.denied = response, True
        return list(edits)
    if tool in EDIT_TOOLS:
        stage = {
            "PreToolUse": Stage.PROPOSED,
            "PostToolUseFailure": Stage.FAILED,
        }.get(event, Stage.APPLIED)
        edits = edits_of(
            tool,
            tool_input,
            item.get("tool_response"),
            stage=stage,
            tool_use_id=tool_use_id,
            cwd=call.cwd,
            session_id=call.session_id,
        )
        for edit in edits:
            edit.error = first_text(item, "error")
        return list(edits)
    if tool in SHELL_TOOLS and event == "PreToolUse":
        # when the command began, should its PostToolUse carry no duration_ms
        if not isinstance(tool_input, dict) or tool_input.get("run_in_background"):
            return []
        line = first_text(tool_input, "command")
        if not line or not tool_use_id:
            return []
        return [Command(line, f"{AGENT}:{tool_use_id}", announced=True)]
    if tool in SHELL_TOOLS and event in ("PostToolUse", "PostToolUseFailure", "PostToolBatch"):
        failed = first_text(item, "error") if event == "PostToolUseFailure" else None
        if event == "PostToolUseFailure" and failed is None:
            failed = ""
        command = _command(
            tool_input,
            item.get("tool_response"),
            failed=failed,
            tool_use_id=tool_use_id,
            payload=payload,
        )
        if command is not None and event == "PostToolBatch":
            command.exit_code = None if command.exit_code == 0 else command.exit_code
        return [command] if command is not None else []
    if tool_use_id and event.startswith("Post"):
        return [Resolved(f"{AGENT}:{tool_use_id}")]
    return []


def read(payload: dict[str, Any], env: Mapping[str, str], event: str | None = None) -> Reading:
    call = _call(payload, env, event)
    reading = Reading(call)
    name = call.event
    if name in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        reading.facts.extend(_tool_facts(call, payload, payload))
    elif name == "PostToolBatch":
        for item in payload.get("tool_calls") or []:
            if isinstance(item, dict):
                reading.facts.extend(_tool_facts(call, payload, item))
    elif name == "UserPromptSubmit":
        reading.facts.append(Prompt(first_text(payload, "prompt")))
    elif name in ("Stop", "StopFailure"):
        reading.facts.append(TurnEnd(reason=name))
    elif name == "SessionEnd":
        reading.facts.append(TurnEnd(session=True, reason=first_text(payload, "reason")))
    elif name == "SessionStart":
        reading.facts.append(SessionStart(first_text(payload, "source")))
    elif not name:
        reading.problems.append("no hook_event_name: not a Claude Code hook payload")
    return reading
