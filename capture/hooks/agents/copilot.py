"""GitHub Copilot hook payloads: the coding agent and Copilot CLI (`.github/hooks/*.json`,
camelCase, no event name and no session id in the payload), and VS Code's agent hooks
(PascalCase `hookEventName`, `sessionId`, snake_case tool fields).

The event is given on the command line by the installed hook (`capture hook copilot
--event postToolUse`); without it, it is inferred from the fields present. Edits: `edit` and
`create` tool calls (`toolArgs` is a JSON string). Rejections: a postToolUse whose
`toolResult.resultType` is `failure` or `denied`. Commands: `bash`/`powershell`; success means
exit 0, failure only that it was not 0.
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
    SessionStart,
    Stage,
    TurnEnd,
)
from capture.hooks.agents.fields import absolute, as_object, content_key, first_text
from capture.model import HunkInput

__all__ = ["AGENT", "read"]

AGENT = "copilot"
#: Copilot CLI's names, then VS Code agent mode's (`replace_string_in_file` and `create_file`
#: in its snake-case generation, `replaceString` and `createFile` before)
EDIT_TOOLS = frozenset(
    {"edit", "str_replace", "str_replace_editor", "replaceString", "replace_string_in_file"}
)
CREATE_TOOLS = frozenset({"create", "write", "createFile", "create_file"})
#: `run_in_terminal` is VS Code agent mode's own name; `runInTerminal` its older spelling
SHELL_TOOLS = frozenset(
    {"bash", "powershell", "shell", "run_in_terminal", "runInTerminal", "runTerminalCommand"}
)
#: VS Code tools that name edited files without their content
VAGUE_EDIT_TOOLS = frozenset({"editFiles", "applyPatch", "insertEdit"})


def _infer_event(payload: dict[str, Any]) -> str:
    if "toolResult" in payload:
        return "postToolUse"
    if "toolName" in payload:
        return "preToolUse"
    if "prompt" in payload:
        return "userPromptSubmitted"
    if "error" in payload:
        return "errorOccurred"
    if "reason" in payload:
        return "sessionEnd"
    if "source" in payload or "initialPrompt" in payload:
        return "sessionStart"
    return ""


_VSCODE_EVENTS = {
    "PreToolUse": "preToolUse",
    "PostToolUse": "postToolUse",
    "UserPromptSubmit": "userPromptSubmitted",
    "SessionStart": "sessionStart",
    "Stop": "stop",
    "SessionEnd": "sessionEnd",
}


def _call(payload: dict[str, Any], env: Mapping[str, str], event: str | None) -> Call:
    named = first_text(payload, "hookEventName", "hook_event_name")
    name = event or (_VSCODE_EVENTS.get(named, named) if named else _infer_event(payload))
    return Call(
        agent=AGENT,
        event=name,
        session_id=first_text(payload, "sessionId", "session_id"),
        model=first_text(payload, "model"),
        cwd=first_text(payload, "cwd"),
        roots=tuple(r for r in (env.get("COPILOT_PROJECT_DIR"),) if r),
    )


def _tool(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    tool = first_text(payload, "toolName", "tool_name") or ""
    args = as_object(payload.get("toolArgs")) or as_object(payload.get("tool_input")) or {}
    return tool, args


def _result(payload: dict[str, Any]) -> tuple[str | None, str]:
    """(resultType, text) of a postToolUse; VS Code sends a bare string (success)."""
    result = payload.get("toolResult")
    if isinstance(result, dict):
        return first_text(result, "resultType"), first_text(result, "textResultForLlm") or ""
    response = payload.get("tool_response")
    if isinstance(response, str):
        return "success", response
    return None, ""


def _edit(call: Call, payload: dict[str, Any], tool: str, args: dict[str, Any]) -> list[Edit]:
    path = first_text(args, "path", "filePath", "file_path")
    if not path:
        return []
    path = absolute(path, call.cwd)
    if call.event == "preToolUse":
        stage = Stage.PROPOSED
    else:
        result_type, _ = _result(payload)
        stage = Stage.APPLIED if result_type in (None, "success") else Stage.FAILED
    written = None
    if tool in CREATE_TOOLS:
        written = first_text(args, "file_text", "content", "contents")
        if written is None:
            return []
        hunks = [HunkInput("", written, line=1)]
    else:
        old = first_text(args, "old_str", "old_string", "oldString")
        new = first_text(args, "new_str", "new_string", "newString")
        # only the path may be known (the documented minimum): then nothing to follow
        hunks = [] if new is None else [HunkInput(old or "", new)]
    tool_use_id = first_text(payload, "tool_use_id")
    key_id = tool_use_id or content_key(call.session_id, call.cwd, tool, repr(sorted(args.items())))
    return [
        Edit(
            path=path,
            hunks=hunks,
            stage=stage,
            key=f"{AGENT}:{key_id}:{path}",
            tool=tool,
            tool_use_id=tool_use_id,
            created_file=tool in CREATE_TOOLS,
            written=written,
            vague=not hunks,
        )
    ]


def _shell(call: Call, payload: dict[str, Any], args: dict[str, Any]) -> list[Command]:
    command = first_text(args, "command", "cmd")
    if not command:
        return []
    result_type, text = _result(payload)
    if result_type == "denied":
        return []  # never ran
    stamp = payload.get("timestamp")
    key = f"{AGENT}:{first_text(payload, 'tool_use_id') or content_key(call.cwd, stamp, command)}"
    return [
        Command(
            command,
            key,
            text,
            exit_code=0 if result_type == "success" else None,
            duration_s=None,
            cwd=first_text(args, "cwd") or call.cwd,
        )
    ]


def read(payload: dict[str, Any], env: Mapping[str, str], event: str | None = None) -> Reading:
    call = _call(payload, env, event)
    reading = Reading(call)
    facts: list[Fact] = reading.facts
    name = call.event
    if name in ("preToolUse", "postToolUse"):
        tool, args = _tool(payload)
        if tool in EDIT_TOOLS | CREATE_TOOLS:
            edits = _edit(call, payload, tool, args)
            facts.extend(edits)
            if not edits:
                reading.problems.append(f"{tool} call without a path")
        elif tool in SHELL_TOOLS and name == "postToolUse":
            facts.extend(_shell(call, payload, args))
        elif tool in VAGUE_EDIT_TOOLS and name == "postToolUse":
            files = args.get("files")
            named = (
                ", ".join(f for f in files if isinstance(f, str)) if isinstance(files, list) else ""
            )
            reading.problems.append(
                f"{tool} names edited files ({named or 'none'}) but carries no edit content"
            )
    elif name == "userPromptSubmitted":
        facts.append(Prompt(first_text(payload, "prompt")))
    elif name == "sessionStart":
        facts.append(SessionStart(first_text(payload, "source")))
        initial = first_text(payload, "initialPrompt")
        if initial:
            facts.append(Prompt(initial))
    elif name == "stop":
        facts.append(TurnEnd(reason="stop"))
    elif name == "sessionEnd":
        facts.append(TurnEnd(session=True, reason=first_text(payload, "reason")))
    elif name == "errorOccurred":
        pass  # kept as an event; it names no edit or command
    elif not name:
        reading.problems.append("not a Copilot hook payload (no known fields)")
    return reading
