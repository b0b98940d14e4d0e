"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`).

The line format is not documented; this follows the community notes in the FORMATS file:
`type` user/assistant lines carrying a Messages-API `message`; assistant `tool_use` blocks; tool
results as user lines with `tool_result` blocks and a top-level `toolUseResult` holding the same
object a PostToolUse hook gets as `tool_response`. Unknown lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from capture.hooks.agents.claude_code import (
    EDIT_TOOLS,
    SHELL_TOOLS,
    after_of,
    edits_of,
    original_of,
)
from capture.hooks.agents.facts import Command, Stage
from capture.hooks.agents.fields import escape_surrogates, exit_code_in, first_text
from capture.hooks.agents.trajectory import Step, harness_kind, input_text
from capture.importers.records import History, PastEdit, PastRun, Turn, timestamp

__all__ = ["after_text", "read_transcript"]


def after_text(tool: str, tool_input: Any, result: Any) -> str | None:
    """The whole file right after an Edit/Write/MultiEdit (Claude Code's own reading)."""
    return after_of(tool, tool_input, result)


#: what Claude Code writes as a user message when the user stops it: no prompt
_INTERRUPTED = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")


def _prompt_of(message: Any) -> str | None:
    """The text a user typed, or None for a line that only carries tool results (or the mark
    of an interruption)."""
    text = _typed(message)
    return None if text is None or text.strip() in _INTERRUPTED else text


def _typed(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if texts and not any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return "\n".join(t for t in texts if isinstance(t, str))
    return None


def read_transcript(lines: Iterable[str], agent: str = "claude-code") -> History:
    history = History(agent)
    turn: Turn | None = None
    model: str | None = None
    calls: dict[str, tuple[str, Any, float, Turn | None, str | None]] = {}
    last_at = 0.0
    sides: dict[str, Turn] = {}  # a subagent's turn, by the id its side chain carries
    for raw in lines:
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            history.bad_lines += 1
            continue
        if not isinstance(line, dict):
            history.bad_lines += 1
            continue
        if "\\u" in raw:
            line = escape_surrogates(line)
        at = last_at = timestamp(line.get("timestamp"), last_at)
        cwd = first_text(line, "cwd") or history.cwd
        history.cwd = history.cwd or cwd
        history.session_id = history.session_id or first_text(line, "sessionId", "session_id")
        kind = line.get("type")
        message = line.get("message")
        key = f"{history.session_id}:{first_text(line, 'uuid') or at}"
        parent = _subagent_of(line)
        current = sides.get(parent) if parent else turn
        if kind == "assistant" and isinstance(message, dict):
            model = first_text(message, "model") or model
            if current is not None and current.model is None:
                current.model = model
            for index, block in enumerate(message.get("content") or []):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and block.get("text"):
                    step = Step("assistant", at, f"{key}:{index}", text=str(block["text"]))
                    step.parent = parent
                    history.steps.append((step, current))
                if block.get("type") == "tool_use":
                    call_id = block.get("id")
                    if isinstance(call_id, str):
                        name, given = str(block.get("name")), block.get("input")
                        calls[call_id] = (name, given, at, current, cwd)
            continue
        if kind != "user" or not isinstance(message, dict):
            continue
        typed = _typed(message)
        if typed is not None:
            harness = harness_kind(typed) or _meta_kind(line)
            step = Step("user", at, key, text=typed, harness=harness, parent=parent)
            if parent and not harness and (current is None or not line.get("parentUuid")):
                # a subagent's side chain begins with the prompt it was started with: its own
                # turn, whose task that prompt is (it is not the user's words)
                side = Turn(first_text(line, "uuid") or key, None, at, model)
                sides[parent] = side
                history.turns.append(side)
                history.steps.append((step, side))
                continue
            if harness or parent or typed.strip() in _INTERRUPTED:
                # kept, marked, and part of the turn it came in: never a prompt of its own
                history.steps.append((step, current))
                continue
            turn_id = first_text(line, "promptId", "uuid") or f"{history.session_id}:{at}"
            turn = Turn(turn_id, typed, at, model)
            history.turns.append(turn)
            history.steps.append((step, turn))
            continue
        for block in message.get("content") or []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call = calls.pop(str(block.get("tool_use_id")), None)
            if call is None:
                continue
            result = line.get("toolUseResult")
            history.steps.append(
                (_tool_step(call, block, result, at, parent, history.session_id), call[3])
            )
            _result(history, call, block, result, at, str(block["tool_use_id"]))
    history.settle_tasks()
    return history


def _subagent_of(line: dict[str, Any]) -> str | None:
    """For a line of a subagent's side chain, the subagent's id (or a mark when unnamed)."""
    if not line.get("isSidechain"):
        return None
    return first_text(line, "agentId") or "sidechain"


def _meta_kind(line: dict[str, Any]) -> str | None:
    if line.get("isCompactSummary"):
        return "compact-summary"
    if line.get("isMeta"):
        return "meta"
    return None


def _tool_step(
    call: tuple[str, Any, float, Turn | None, str | None],
    block: dict[str, Any],
    result: Any,
    at: float,
    parent: str | None,
    session_id: str | None,
) -> Step:
    name, tool_input, called_at, _, _ = call
    text = _content_text(block)
    path = (
        first_text(tool_input, "file_path", "notebook_path", "path")
        if isinstance(tool_input, dict)
        else None
    )
    step = Step(
        "tool",
        called_at,
        f"{session_id}:{block.get('tool_use_id')}",
        text=text,
        tool=name,
        call_id=str(block.get("tool_use_id")),
        input=input_text(tool_input),
        is_error=bool(block.get("is_error")),
        parent=parent,
        path=path,
    )
    if isinstance(result, dict) and isinstance(result.get("agentId"), str):
        # a subagent's call: its side chain names this id
        step.spawned = result["agentId"]
    step.done_at = at
    return step


#: how a tool result begins when the user refused the call (it did not run)
_REFUSED = ("The user doesn't want to proceed", "The user doesn't want to take this action")


def _content_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _result(
    history: History,
    call: tuple[str, Any, float, Turn | None, str | None],
    block: dict[str, Any],
    result: Any,
    at: float,
    tool_use_id: str,
) -> None:
    name, tool_input, called_at, turn, cwd = call
    failed = bool(block.get("is_error"))
    if name in EDIT_TOOLS:
        stage = Stage.FAILED if failed else Stage.APPLIED
        response = result if isinstance(result, dict) else None
        for edit in edits_of(
            name,
            tool_input,
            response,
            stage=stage,
            tool_use_id=tool_use_id,
            cwd=cwd,
            session_id=history.session_id,
        ):
            if failed:
                # what the call answered: a refusal, or the tool's error (its kind is kept)
                edit.error = _content_text(block) or "error"
            after = None if failed else after_of(name, tool_input, response)
            if edit.original is None:
                edit.original = original_of(response)
            if after is not None and edit.original is not None and not edit.created_file:
                # the file before and after: the hunks are worked out between the two, each
                # at its place (a replacement whose text occurs twice included)
                edit.written = after
            history.edits.append(PastEdit(edit, called_at, turn, cwd, after))
        return
    if name not in SHELL_TOOLS or not isinstance(tool_input, dict):
        return
    command = first_text(tool_input, "command")
    if not command or tool_input.get("run_in_background"):
        return
    text = _content_text(block)
    if isinstance(result, dict):
        output = "".join(
            p for p in (first_text(result, "stdout"), first_text(result, "stderr")) if p
        )
    else:
        output = text
    code: int | None = 0
    failure = None
    if failed:
        if text.startswith(_REFUSED):
            return  # the user declined it: it never ran
        interrupted = text.lstrip().startswith("[Request interrupted")
        body = text.removeprefix("Error: ")
        first, _, rest = body.partition("\n")
        code = exit_code_in(first)
        if code is not None:
            output = rest
        elif rest.strip():
            # 1.0.5x-1.0.7x: the output of the failed command with no "Exit code N" line; it
            # ran and failed, with a code the transcript does not say
            output = body
        else:
            output, failure = text, "interrupted" if interrupted else "did not start"
    elif isinstance(result, dict) and result.get("interrupted"):
        code, failure = None, "interrupted"
    run = Command(
        command,
        f"{history.agent}:{tool_use_id}",
        output=output,
        exit_code=code,
        duration_s=max(at - called_at, 0.0),
        cwd=cwd,
        failure=failure,
    )
    history.runs.append(PastRun(run, called_at, turn, cwd))
