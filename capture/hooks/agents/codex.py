"""OpenAI Codex CLI payloads: hooks (generated hook schemas) and the legacy `notify` program.

Edits: `apply_patch`, whose `tool_input.command` holds the raw `*** Begin Patch` text (parsed
here for paths and hunks). Rejections: a PreToolUse apply_patch with no PostToolUse for its
`tool_use_id`. Commands: Bash; `tool_response` is plain output with no exit code (the code is
taken from the text when it says so). Episodes: `session_id` and `turn_id`; notify sends
kebab-case `thread-id` and `turn-id` when a turn completes.
"""

from __future__ import annotations

import re
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
from capture.hooks.agents.fields import (
    absolute,
    as_object,
    content_key,
    exit_code_in,
    first_text,
    number,
)
from capture.hooks.agents.patches import parse_apply_patch

__all__ = [
    "AGENT",
    "PATCH_TOOLS",
    "SHELL_PATCH_KEY",
    "command_text",
    "heredoc_patch",
    "patch_edits",
    "read",
]

AGENT = "codex"
PATCH_TOOLS = frozenset({"apply_patch", "Edit", "Write"})
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "local_shell", "container.exec"})
#: key prefix of an edit announced by a patch run through the shell tool: Codex sends no
#: PostToolUse for it, so the next hook of the session looks for it on disk
SHELL_PATCH_KEY = f"{AGENT}:shell:"
_HEREDOC = re.compile(r"^\s*apply_patch\s*<<-?\s*(['\"]?)(\w+)\1[ \t]*\n(.*?)^\2\s*$", re.M | re.S)


def heredoc_patch(command: str) -> str | None:
    """The patch of an `apply_patch <<'EOF' ... EOF` shell command (Codex 0.17x runs patches
    through its shell tool that way), or None."""
    found = _HEREDOC.search(command)
    if found is None or "*** Begin Patch" not in found.group(3):
        return None
    return found.group(3)


def _call(payload: dict[str, Any], env: Mapping[str, str], event: str | None) -> Call:
    notify = payload.get("type") == "agent-turn-complete"
    return Call(
        agent=AGENT,
        event=event or ("notify" if notify else first_text(payload, "hook_event_name") or ""),
        session_id=first_text(payload, "session_id", "thread-id", "thread_id"),
        turn_id=first_text(payload, "turn_id", "turn-id"),
        model=first_text(payload, "model"),
        cwd=first_text(payload, "cwd"),
        roots=tuple(r for r in (env.get("CODEX_PROJECT_DIR"),) if r),
        agent_version=first_text(payload, "cli_version", "version"),
    )


def command_text(value: Any) -> str | None:
    """A shell command given as a string or an argv list (`["bash", "-lc", "..."]`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and value[1] in ("-lc", "-c") and value[0].endswith("sh"):
            return str(value[2])
        return " ".join(value)
    return None


def patch_edits(
    patch: str, *, stage: Stage, cwd: str | None, key_id: str, tool: str = "apply_patch"
) -> tuple[list[Edit], list[str]]:
    """One Edit per file of an apply_patch text, and a problem line per file that cannot be
    followed (deletions: nothing is left on disk to observe)."""
    edits: list[Edit] = []
    problems: list[str] = []
    for part in parse_apply_patch(patch):
        path = absolute(part.move_to or part.path, cwd)
        if part.action == "delete":
            problems.append(f"{path}: file deletion is not tracked")
            continue
        if not part.hunks:
            continue
        edits.append(
            Edit(
                path=path,
                hunks=part.hunks,
                stage=stage,
                key=f"{AGENT}:{key_id}:{path}",
                tool=tool,
                tool_use_id=key_id,
                created_file=part.action == "add",
            )
        )
    return edits, problems


def _tool(call: Call, payload: dict[str, Any], reading: Reading) -> None:
    tool = first_text(payload, "tool_name") or ""
    tool_use_id = first_text(payload, "tool_use_id")
    tool_input = as_object(payload.get("tool_input")) or {}
    event = call.event
    if tool in PATCH_TOOLS:
        patch = first_text(tool_input, "command", "input", "patch")
        if not patch or "*** " not in patch:
            return
        stage = {"PreToolUse": Stage.PROPOSED, "PostToolUseFailure": Stage.FAILED}.get(
            event, Stage.APPLIED
        )
        key_id = tool_use_id or content_key(call.session_id, patch)
        edits, problems = patch_edits(patch, stage=stage, cwd=call.cwd, key_id=key_id)
        if stage is Stage.APPLIED and _failed(payload.get("tool_response")):
            for edit in edits:
                edit.stage = Stage.FAILED
        reading.facts.extend(edits)
        if stage is not Stage.PROPOSED:
            reading.problems.extend(problems)
        return
    if tool in SHELL_TOOLS and event == "PreToolUse":
        line = command_text(tool_input.get("command"))
        patch = heredoc_patch(line) if line else None
        if patch is not None:
            key_id = "shell:" + (tool_use_id or content_key(call.session_id, patch))
            cwd = first_text(tool_input, "workdir", "cwd") or call.cwd
            edits, _ = patch_edits(patch, stage=Stage.PROPOSED, cwd=cwd, key_id=key_id)
            for edit in edits:
                edit.tool_use_id = tool_use_id
            reading.facts.extend(edits)
            return
        # Codex reports no duration: when the command began comes from here
        if line and tool_use_id:
            cwd = first_text(tool_input, "workdir", "cwd") or call.cwd
            reading.facts.append(Command(line, f"{AGENT}:{tool_use_id}", cwd=cwd, announced=True))
        return
    if tool in SHELL_TOOLS and event in ("PostToolUse", "PostToolUseFailure"):
        command = command_text(tool_input.get("command"))
        if not command:
            return
        response = payload.get("tool_response")
        result = as_object(response)
        if result is not None:
            output = first_text(result, "output", "stdout", "aggregated_output") or ""
            code = number(result, "exit_code", "exitCode")
            if code is None:
                code = number(result.get("metadata"), "exit_code")
            exit_code = None if code is None else int(code)
        else:
            output = response if isinstance(response, str) else ""
            exit_code = exit_code_in(output)
        if event == "PostToolUseFailure":
            output = output or first_text(payload, "error") or ""
            exit_code = exit_code if exit_code is not None else exit_code_in(output)
        key = f"{AGENT}:{tool_use_id or content_key(call.turn_id, command, output)}"
        cwd = first_text(tool_input, "workdir", "cwd") or call.cwd
        reading.facts.append(Command(command, key, output, exit_code, None, cwd))
        return
    if tool_use_id and event.startswith("Post"):
        reading.facts.append(Resolved(f"{AGENT}:{tool_use_id}"))


def _failed(response: Any) -> bool:
    result = as_object(response)
    if result is not None:
        if result.get("success") is False:
            return True
        code = number(result.get("metadata"), "exit_code")
        return code is not None and code != 0
    return False


def read(payload: dict[str, Any], env: Mapping[str, str], event: str | None = None) -> Reading:
    call = _call(payload, env, event)
    reading = Reading(call)
    facts: list[Fact] = reading.facts
    name = call.event
    if name in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        _tool(call, payload, reading)
    elif name == "UserPromptSubmit":
        facts.append(Prompt(first_text(payload, "prompt")))
    elif name == "notify":
        messages = payload.get("input-messages") or payload.get("input_messages")
        if isinstance(messages, list) and messages:
            text = "\n\n".join(m for m in messages if isinstance(m, str))
            facts.append(Prompt(text or None))
        facts.append(TurnEnd(reason="agent-turn-complete"))
    elif name in ("Stop", "StopFailure", "Interrupt"):
        facts.append(TurnEnd(reason=name))
    elif name == "SessionEnd":
        facts.append(TurnEnd(session=True, reason=first_text(payload, "reason")))
    elif name == "SessionStart":
        facts.append(SessionStart(first_text(payload, "source")))
    elif not name:
        reading.problems.append("no hook_event_name: not a Codex hook or notify payload")
    return reading
