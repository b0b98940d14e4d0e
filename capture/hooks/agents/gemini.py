"""Gemini CLI hook payloads (docs/hooks/reference.md, docs/tools/*).

Edits: `replace` (old_string/new_string) and `write_file` (content); AfterTool's
`tool_response.returnDisplay` may hold `originalContent`. Rejections: a BeforeTool with no
AfterTool for the same call (Gemini sends no tool call id, so the call is named by its input),
or an AfterTool whose response has an `error`. Commands: `run_shell_command`, the exit code is
the "Exit Code: N" line of `llmContent`. Episodes: `session_id`; a turn runs from BeforeAgent to
AfterAgent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from capture.hooks.agents.facts import (
    Call,
    Command,
    Edit,
    Prompt,
    Reading,
    SessionStart,
    Stage,
    TurnEnd,
)
from capture.hooks.agents.fields import absolute, as_object, content_key, exit_code_in, first_text
from capture.model import HunkInput

__all__ = ["AGENT", "read"]

AGENT = "gemini"
REPLACE_TOOLS = frozenset({"replace", "edit", "smart_edit"})
WRITE_TOOLS = frozenset({"write_file", "write"})
SHELL_TOOLS = frozenset({"run_shell_command", "shell"})

_SECTION = re.compile(
    r"^(Command|Directory|Stdout|Stderr|Error|Exit Code|Signal|Background PIDs|"
    r"Process Group PGID|Output): ?",
    re.MULTILINE,
)


def _call(payload: dict[str, Any], env: Mapping[str, str], event: str | None) -> Call:
    roots = tuple(r for r in (env.get("GEMINI_PROJECT_DIR"), env.get("CLAUDE_PROJECT_DIR")) if r)
    return Call(
        agent=AGENT,
        event=event or first_text(payload, "hook_event_name") or "",
        session_id=first_text(payload, "session_id"),
        model=first_text(payload, "model"),
        cwd=first_text(payload, "cwd"),
        roots=roots,
    )


def sections(text: str) -> dict[str, str]:
    """The labelled parts of run_shell_command's llmContent ("Stdout: ...", "Exit Code: 1")."""
    found: dict[str, str] = {}
    marks = list(_SECTION.finditer(text))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        found[mark.group(1)] = text[mark.end() : end].rstrip("\n")
    return found


def _edit(call: Call, payload: dict[str, Any], tool: str, stage: Stage) -> list[Edit]:
    tool_input = as_object(payload.get("tool_input")) or {}
    path = first_text(tool_input, "file_path", "absolute_path", "path")
    if not path:
        return []
    path = absolute(path, call.cwd)
    response = as_object(payload.get("tool_response")) or {}
    display = as_object(response.get("returnDisplay")) or {}
    original = display.get("originalContent")
    original = original if isinstance(original, str) else None
    written = None
    created = False
    if tool in WRITE_TOOLS:
        written = first_text(tool_input, "content")
        if written is None:
            return []
        # 0.6x says isNewFile (and gives an empty originalContent); older releases gave null
        created = stage is Stage.APPLIED and (
            display.get("isNewFile") is True or ("originalContent" in display and original is None)
        )
        hunks = [HunkInput("" if created else (original or ""), written, start=0)]
    else:
        old = first_text(tool_input, "old_string") or ""
        new = first_text(tool_input, "new_string") or ""
        hunks = [HunkInput(old, new)]
    error = response.get("error")
    if stage is Stage.APPLIED and error:
        stage = Stage.FAILED
    # Gemini sends no tool call id: Before and After name one call by what it asked for
    digest = content_key(call.session_id, tool, path, repr(sorted(tool_input.items()))[:8192])
    return [
        Edit(
            path=path,
            hunks=hunks,
            stage=stage,
            key=f"{AGENT}:{digest}:{path}",
            tool=tool,
            created_file=created,
            written=written,
            original=original,
            vague=written is not None and original is None and not created,
            error=error if isinstance(error, str) else None,
        )
    ]


def _shell(call: Call, payload: dict[str, Any]) -> list[Command]:
    tool_input = as_object(payload.get("tool_input")) or {}
    command = first_text(tool_input, "command")
    if not command:
        return []
    response = as_object(payload.get("tool_response")) or {}
    content = response.get("llmContent")
    text = content if isinstance(content, str) else ""
    parts = sections(text)
    exit_code = None
    if parts.get("Exit Code", "").strip().isdigit():
        exit_code = int(parts["Exit Code"].strip())
    elif text:
        exit_code = exit_code_in(text)
    if exit_code is None and "Output" in parts and not {"Error", "Signal"} & parts.keys():
        # Gemini CLI 0.6x names the exit code only when it is not 0
        exit_code = 0
    output = "\n".join(
        parts[k] for k in ("Stdout", "Stderr", "Output") if parts.get(k) not in (None, "(empty)")
    )
    if not output:
        display = response.get("returnDisplay")
        output = display if isinstance(display, str) else text
    directory = first_text(tool_input, "dir_path", "directory")
    cwd = absolute(directory, call.cwd) if directory else call.cwd
    key = f"{AGENT}:{content_key(call.session_id, first_text(payload, 'timestamp'), command)}"
    signal = parts.get("Signal", "").strip()
    failure = f"signal {signal}" if signal and signal != "(none)" else None
    return [Command(command, key, output, exit_code, None, cwd, failure=failure)]


def read(payload: dict[str, Any], env: Mapping[str, str], event: str | None = None) -> Reading:
    call = _call(payload, env, event)
    reading = Reading(call)
    name = call.event
    tool = first_text(payload, "tool_name") or ""
    if name in ("BeforeTool", "AfterTool") and tool in REPLACE_TOOLS | WRITE_TOOLS:
        stage = Stage.PROPOSED if name == "BeforeTool" else Stage.APPLIED
        reading.facts.extend(_edit(call, payload, tool, stage))
    elif name == "AfterTool" and tool in SHELL_TOOLS:
        reading.facts.extend(_shell(call, payload))
    elif name == "BeforeAgent":
        reading.facts.append(Prompt(first_text(payload, "prompt")))
    elif name == "AfterAgent":
        reading.facts.append(TurnEnd(reason="AfterAgent"))
    elif name == "SessionEnd":
        reading.facts.append(TurnEnd(session=True, reason=first_text(payload, "reason")))
    elif name == "SessionStart":
        reading.facts.append(SessionStart(first_text(payload, "source")))
    elif not name:
        reading.problems.append("no hook_event_name: not a Gemini CLI hook payload")
    return reading
