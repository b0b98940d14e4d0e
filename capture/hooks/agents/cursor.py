"""Cursor hook payloads (cursor.com/docs/agent/hooks, older and newer copies).

Edits: afterFileEdit (`edits[]` of old/new strings with no positions: located by content) and
afterTabFileEdit (Tab completions, with ranges). Commands: afterShellExecution (no exit code)
and the generic postToolUse for the Shell tool, whose `tool_output` is a JSON string that may
hold `exitCode`. Rejections: postToolUseFailure of a file-writing tool. Episodes:
`conversation_id` and `generation_id`.
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
from capture.hooks.agents.fields import absolute, as_object, content_key, first_text, number
from capture.model import HunkInput

__all__ = ["AGENT", "read"]

AGENT = "cursor"
SHELL_TOOLS = frozenset({"Shell", "Terminal", "run_terminal_cmd"})
WRITE_TOOLS = frozenset({"Write", "Edit", "StrReplace", "MultiEdit", "edit_file", "search_replace"})


def _call(payload: dict[str, Any], env: Mapping[str, str], event: str | None) -> Call:
    roots: list[str] = []
    workspace_roots = payload.get("workspace_roots")
    if isinstance(workspace_roots, list):
        roots.extend(r for r in workspace_roots if isinstance(r, str) and r)
    for var in ("CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"):
        if env.get(var):
            roots.append(env[var])
    return Call(
        agent=AGENT,
        event=event or first_text(payload, "hook_event_name") or "",
        session_id=first_text(payload, "conversation_id", "session_id"),
        turn_id=first_text(payload, "generation_id"),
        model=first_text(payload, "model"),
        cwd=first_text(payload, "cwd") or (roots[0] if roots else None),
        roots=tuple(roots),
        agent_version=first_text(payload, "cursor_version"),
    )


def _edit_hunks(edits: Any, *, with_ranges: bool) -> list[HunkInput]:
    hunks: list[HunkInput] = []
    if not isinstance(edits, list):
        return hunks
    for item in edits:
        if not isinstance(item, dict):
            continue
        old = first_text(item, "old_string", "oldString") or ""
        new = first_text(item, "new_string", "newString") or ""
        line = None
        if with_ranges:
            span = item.get("range")
            start = number(span, "start_line_number", "startLineNumber")
            line = int(start) if start is not None and start >= 1 else None
        if old or new:
            hunks.append(HunkInput(old, new, line=line))
    return hunks


def _file_edit(call: Call, payload: dict[str, Any], *, tab: bool) -> list[Fact]:
    path = first_text(payload, "file_path", "filePath")
    if not path:
        return []
    path = absolute(path, call.cwd)
    hunks = _edit_hunks(payload.get("edits"), with_ranges=tab)
    if not hunks:
        return []
    # afterFileEdit has no tool call id: the generation, the file and the edits name it
    digest = content_key(path, *((h.old_text, h.new_text) for h in hunks))
    return [
        Edit(
            path=path,
            hunks=hunks,
            stage=Stage.APPLIED,
            key=f"{AGENT}:{call.turn_id or call.session_id}:{digest}",
            tool="tab" if tab else "edit",
        )
    ]


def _shell_key(call: Call, command: str, output: str) -> str:
    # afterShellExecution and postToolUse(Shell) may both report one run: same key for both
    return f"{AGENT}:{call.turn_id or call.session_id}:{content_key(command, output.strip())}"


def _tool_write(call: Call, payload: dict[str, Any], stage: Stage) -> list[Fact]:
    tool_input = as_object(payload.get("tool_input")) or {}
    path = first_text(tool_input, "file_path", "path", "target_file", "filePath")
    if not path:
        return []
    path = absolute(path, call.cwd)
    old = first_text(tool_input, "old_string", "oldString") or ""
    new = first_text(tool_input, "new_string", "newString")
    written = None
    if new is None:
        written = first_text(tool_input, "contents", "content", "code_edit", "file_text")
        if written is None:
            return []
        new = written
    tool_use_id = first_text(payload, "tool_use_id")
    key_id = tool_use_id or content_key(call.turn_id, path, old, new)
    return [
        Edit(
            path=path,
            hunks=[HunkInput(old, new)],
            stage=stage,
            key=f"{AGENT}:{key_id}:{path}",
            tool=first_text(payload, "tool_name"),
            tool_use_id=tool_use_id,
            written=written,
            vague=written is not None,
            error=first_text(payload, "error_message", "failure_type"),
        )
    ]


def _shell(call: Call, payload: dict[str, Any]) -> list[Fact]:
    event = call.event
    tool_input = as_object(payload.get("tool_input")) or {}
    command = first_text(payload, "command") or first_text(tool_input, "command")
    if not command:
        return []
    cwd = first_text(tool_input, "working_directory", "cwd") or call.cwd
    duration = number(payload, "duration")
    seconds = None if duration is None else duration / 1000
    if event == "afterShellExecution":
        output = first_text(payload, "output") or ""
        return [Command(command, _shell_key(call, command, output), output, None, seconds, cwd)]
    if event == "postToolUseFailure":
        failure = first_text(payload, "failure_type") or "error"
        message = first_text(payload, "error_message") or ""
        key = f"{AGENT}:{first_text(payload, 'tool_use_id') or content_key(command, message)}"
        return [Command(command, key, message, None, seconds, cwd, failure=failure)]
    raw_output = payload.get("tool_output")
    result = as_object(raw_output)
    if result is not None:
        output = "".join(
            part for part in (first_text(result, "stdout"), first_text(result, "stderr")) if part
        ) or (first_text(result, "output") or "")
        code = number(result, "exitCode", "exit_code")
        exit_code = None if code is None else int(code)
    else:
        output = raw_output if isinstance(raw_output, str) else ""
        exit_code = None
    return [Command(command, _shell_key(call, command, output), output, exit_code, seconds, cwd)]


def read(payload: dict[str, Any], env: Mapping[str, str], event: str | None = None) -> Reading:
    call = _call(payload, env, event)
    reading = Reading(call)
    name = call.event
    facts = reading.facts
    tool = first_text(payload, "tool_name") or ""
    if name == "beforeSubmitPrompt":
        facts.append(Prompt(first_text(payload, "prompt")))
    elif name == "afterFileEdit":
        facts.extend(_file_edit(call, payload, tab=False))
    elif name == "afterTabFileEdit":
        facts.extend(_file_edit(call, payload, tab=True))
    elif (
        name == "afterShellExecution"
        or name in ("postToolUse", "postToolUseFailure")
        and tool in SHELL_TOOLS
    ):
        facts.extend(_shell(call, payload))
    elif name == "postToolUseFailure" and tool in WRITE_TOOLS:
        facts.extend(_tool_write(call, payload, Stage.FAILED))
    elif name == "preToolUse" and tool in WRITE_TOOLS:
        facts.extend(_tool_write(call, payload, Stage.PROPOSED))
    elif name == "postToolUse" and tool in WRITE_TOOLS:
        # the edit itself arrives as afterFileEdit; this settles the preToolUse record
        for edit in _tool_write(call, payload, Stage.PROPOSED):
            if isinstance(edit, Edit):
                facts.append(Resolved(edit.key))
    elif name == "stop":
        facts.append(TurnEnd(reason=first_text(payload, "status")))
    elif name == "sessionEnd":
        facts.append(TurnEnd(session=True, reason=first_text(payload, "reason")))
    elif name == "sessionStart":
        facts.append(SessionStart(first_text(payload, "composer_mode")))
    elif not name:
        reading.problems.append("no hook_event_name: not a Cursor hook payload")
    return reading
