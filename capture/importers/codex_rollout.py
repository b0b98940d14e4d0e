"""Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Source-only format (no stability promise), read leniently: `session_meta`, `turn_context`,
`response_item` (user messages, `custom_tool_call` apply_patch, `function_call` shell calls and
their outputs) and `event_msg` (`user_message`, `patch_apply_end` with per-file diffs,
`exec_command_end` with the exit code). `patch_apply_end.changes` is tagged either way it has
been (`{"type": "update", ...}` or `{"update": {...}}`).

Rollout generations (ROLLOUT_GENERATIONS names them):
- "bare" (Codex CLI 0.1x-0.2x, mid 2025): a first line `{"id", "timestamp", "instructions"}`,
  then the response items themselves, one a line (`message`, `function_call`,
  `function_call_output`, `reasoning`), with `{"record_type": "state"}` lines between and no
  timestamps; no `turn_context`: each user message starts a turn;
- "wrapped" (0.3x and later): `{"timestamp", "type", "payload"}` lines; up to 0.4x the prompt
  (`user_message`) comes first and a `turn_context` with no `turn_id` precedes every model
  request; from 0.5x a `turn_context` with the turn's `turn_id` opens the turn, its prompt
  follows;
- apply_patch as a shell command (up to 0.5x, e.g. 0.58): a `shell` function call whose
  command is `["apply_patch", "*** Begin Patch..."]` (or a `bash -lc` heredoc of it), answered by
  its `function_call_output`; later versions call the `apply_patch` custom tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from capture.hooks.agents.codex import command_text, patch_edits
from capture.hooks.agents.facts import Command, Edit, Stage
from capture.hooks.agents.fields import (
    absolute,
    as_object,
    escape_surrogates,
    exit_code_in,
    first_text,
    number,
)
from capture.importers.codex_steps import add_rollout_steps
from capture.importers.records import History, PastEdit, PastRun, Turn, timestamp
from capture.model import HunkInput

__all__ = ["REFUSED_OUTPUTS", "ROLLOUT_GENERATIONS", "diff_hunks", "read_rollout", "shell_patch"]

AGENT = "codex"
_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
SHELL_CALLS = frozenset({"shell", "exec_command", "container.exec", "local_shell", "shell_command"})
ROLLOUT_GENERATIONS = ("bare", "wrapped")
#: what a tool call's output says when the user declined it at the approval prompt
REFUSED_OUTPUTS = frozenset({"patch rejected by user", "exec command rejected by user"})
#: the response items a bare rollout line may be
_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "reasoning",
    }
)
_PATCH = re.compile(r"\*\*\* Begin Patch\n.*?\*\*\* End Patch", re.DOTALL)
_CWD_TAG = re.compile(r"<cwd>([^<]+)</cwd>")


def shell_patch(command: str) -> str | None:
    """The apply_patch text of a shell command that runs apply_patch (Codex up to 0.5x)."""
    if "apply_patch" not in command:
        return None
    found = _PATCH.search(command)
    return found.group(0) + "\n" if found else None


def _generation(line: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(kind, payload) of a rollout line, of either generation; (None, None) when it is no
    record of either."""
    payload = line.get("payload")
    if isinstance(payload, dict):
        kind = line.get("type")
        return (kind if isinstance(kind, str) else None), payload
    if line.get("type") in _ITEM_TYPES:
        return "response_item", line
    if "record_type" in line:
        return "state", line
    if isinstance(line.get("id"), str) and "timestamp" in line:
        return "session_meta", line
    return None, None


def _user_text(payload: dict[str, Any]) -> str | None:
    """The text of a user message item; None for the context Codex itself sends."""
    if payload.get("role") != "user":
        return None
    content = payload.get("content")
    texts = [
        b.get("text")
        for b in (content if isinstance(content, list) else [])
        if isinstance(b, dict) and isinstance(b.get("text"), str)
    ]
    text = "\n".join(t for t in texts if t)
    if not text or text.lstrip().startswith(("<environment_context>", "<user_instructions>")):
        return None
    return text


def diff_hunks(diff: str) -> list[tuple[HunkInput, str | None, str | None]]:
    """Hunks of a unified diff with the unchanged lines around each: (hunk, before, after).
    A context is None when the diff does not show it ("" means the file's start or end)."""
    out: list[tuple[HunkInput, str | None, str | None]] = []
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        match = _HEADER.match(lines[i])
        if not match:
            i += 1
            continue
        new_line = int(match.group(2))
        body: list[tuple[str, str]] = []
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            raw = lines[i]
            if not raw.startswith("\\"):
                body.append((raw[:1] if raw[:1] in "+- " else " ", raw[1:]))
            i += 1
        j = 0
        line_at = new_line
        while j < len(body):
            if body[j][0] == " ":
                line_at += 1
                j += 1
                continue
            k = j
            while k < len(body) and body[k][0] != " ":
                k += 1
            old = "".join(t for tag, t in body[j:k] if tag == "-")
            new = "".join(t for tag, t in body[j:k] if tag == "+")
            ctx_before = [t for tag, t in body[max(0, j - 3) : j] if tag == " "]
            ctx_after = [t for tag, t in body[k : k + 3] if tag == " "]
            before: str | None = "".join(ctx_before) if ctx_before else None
            if before is None and line_at == 1:
                before = ""
            after = "".join(ctx_after) if ctx_after else None
            out.append((HunkInput(old, new, line=line_at), before, after))
            line_at += sum(1 for tag, _ in body[j:k] if tag == "+")
            j = k
    return out


def _changes(payload: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(path, kind, change) of a patch_apply_end, whichever way its changes are tagged."""
    changes = payload.get("changes")
    out: list[tuple[str, str, dict[str, Any]]] = []
    if not isinstance(changes, dict):
        return out
    for path, change in changes.items():
        if not isinstance(change, dict):
            continue
        kind = change.get("type")
        if isinstance(kind, str):
            out.append((path, kind, change))
            continue
        for key in ("add", "update", "delete"):
            if isinstance(change.get(key), dict):
                out.append((path, key, change[key]))
    return out


def read_rollout(lines: Iterable[str]) -> History:
    history = History(AGENT)
    turn: Turn | None = None
    model: str | None = None
    cwd: str | None = None
    patches: dict[str, tuple[str, float, Turn | None, str | None]] = {}
    shells: dict[str, tuple[str, float, Turn | None, str | None]] = {}
    last_at = 0.0
    bare = True  # until a wrapped line is seen
    awaiting_prompt = False  # a turn_context with a turn_id opened the turn; its prompt follows
    records: list[tuple[str | None, dict[str, Any], float]] = []  # for the trajectory
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
        kind, payload = _generation(line)
        if payload is None:
            history.bad_lines += 1
            continue
        bare = bare and payload is line
        at = last_at = timestamp(line.get("timestamp"), last_at)
        records.append((kind, payload, at))
        ptype = payload.get("type")
        if kind == "state":
            continue
        if cwd is None and kind == "response_item" and ptype == "message":
            # bare rollouts say the working directory only in the context message
            tag = _CWD_TAG.search(json.dumps(payload.get("content")))
            if tag is not None:
                cwd = history.cwd = tag.group(1)
        if kind == "response_item" and ptype == "message" and bare:
            # no turn_context lines (bare rollouts): each user message starts a turn
            text = _user_text(payload)
            if text is not None:
                turn = Turn(f"{history.session_id}:{len(history.turns)}", text, at, model)
                history.turns.append(turn)
            continue
        if kind == "session_meta":
            history.session_id = first_text(payload, "id") or history.session_id
            cwd = first_text(payload, "cwd") or cwd
            history.cwd = history.cwd or cwd
        elif kind == "turn_context":
            cwd = first_text(payload, "cwd") or cwd
            model = first_text(payload, "model") or model
            turn_id = first_text(payload, "turn_id")
            if turn_id is not None and (turn is None or turn.turn_id != turn_id):
                # a turn's own id (0.5x and later): the turn begins here, its prompt follows
                turn = Turn(turn_id, None, at, model)
                history.turns.append(turn)
                awaiting_prompt = True
            elif turn_id is None and turn is None:
                turn = Turn(f"{history.session_id}:{at}", None, at, model)
                history.turns.append(turn)
                awaiting_prompt = True
            elif turn is not None and turn.model is None:
                # no id (up to 0.4x): a turn_context before every model request, not a turn
                turn.model = model
        elif kind == "event_msg" and ptype == "user_message":
            text = first_text(payload, "message")
            if not text:
                pass
            elif turn is not None and awaiting_prompt and turn.prompt is None:
                turn.prompt = text
                awaiting_prompt = False
            else:
                # the prompt comes first and opens the turn (up to 0.4x), or a new prompt
                turn = Turn(f"{history.session_id}:{at}", text, at, model)
                history.turns.append(turn)
                awaiting_prompt = False
        elif kind == "response_item" and ptype == "custom_tool_call":
            if payload.get("name") == "apply_patch" and isinstance(payload.get("input"), str):
                patches[str(payload.get("call_id"))] = (payload["input"], at, turn, cwd)
        elif kind == "response_item" and ptype in ("function_call", "local_shell_call"):
            args = as_object(payload.get("arguments")) or as_object(payload.get("action")) or {}
            command = command_text(args.get("cmd")) or command_text(args.get("command"))
            name = payload.get("name") or "local_shell"
            if command and name in SHELL_CALLS:
                workdir = first_text(args, "workdir", "working_directory") or cwd
                patch_text = shell_patch(command)
                if patch_text is not None:
                    patches[str(payload.get("call_id"))] = (patch_text, at, turn, workdir)
                else:
                    shells[str(payload.get("call_id"))] = (command, at, turn, workdir)
        elif kind == "event_msg" and ptype == "patch_apply_end":
            call_id = str(payload.get("call_id"))
            patch = patches.pop(call_id, None)
            _patch_end(history, payload, call_id, patch, at, turn, cwd)
        elif kind == "response_item" and ptype == "custom_tool_call_output":
            call_id = str(payload.get("call_id"))
            patch = patches.pop(call_id, None)
            if patch is not None:
                _patch_output(history, patch, call_id, payload.get("output"))
        elif kind == "event_msg" and ptype == "exec_command_end":
            call_id = str(payload.get("call_id"))
            shell = shells.pop(call_id, None)
            command = command_text(payload.get("command")) or (shell[0] if shell else None)
            if command:
                output = first_text(payload, "aggregated_output", "formatted_output") or ""
                code = number(payload, "exit_code")
                duration = payload.get("duration")
                seconds = (
                    (number(duration, "secs") or 0.0) + (number(duration, "nanos") or 0.0) / 1e9
                    if isinstance(duration, dict)
                    else None
                )
                run_cwd = first_text(payload, "cwd") or (shell[3] if shell else cwd)
                started = shell[1] if shell else at - (seconds or 0.0)
                history.runs.append(
                    PastRun(
                        Command(
                            command,
                            f"{AGENT}:{call_id}",
                            output,
                            None if code is None else int(code),
                            seconds,
                            run_cwd,
                        ),
                        started,
                        shell[2] if shell else turn,
                        run_cwd,
                    )
                )
        elif kind == "response_item" and ptype == "function_call_output":
            call_id = str(payload.get("call_id"))
            shell_patched = patches.pop(call_id, None)
            if shell_patched is not None:
                _patch_output(history, shell_patched, call_id, payload.get("output"))
                continue
            shell = shells.pop(call_id, None)
            if shell is not None:
                text = payload.get("output")
                result = as_object(text)
                if result is not None:
                    output = first_text(result, "output") or ""
                    given = number(result.get("metadata"), "exit_code")
                    code_found = None if given is None else int(given)
                else:
                    output = text if isinstance(text, str) else ""
                    code_found = exit_code_in(output)
                    output = output.split("Output:\n", 1)[1] if "Output:\n" in output else output
                run = Command(
                    shell[0], f"{AGENT}:{call_id}", output, code_found, at - shell[1], shell[3]
                )
                history.runs.append(PastRun(run, shell[1], shell[2], shell[3]))
    add_rollout_steps(history, records)
    return history


def _patch_output(
    history: History,
    patch: tuple[str, float, Turn | None, str | None],
    call_id: str,
    output: Any,
) -> None:
    """The edits of an apply_patch call answered by its output (no patch_apply_end seen)."""
    outcome = as_object(output)
    if outcome is not None:
        code = number(outcome.get("metadata"), "exit_code")
    else:
        code = exit_code_in(output) if isinstance(output, str) else None
    refused = isinstance(output, str) and output.strip() in REFUSED_OUTPUTS
    stage = Stage.APPLIED if code in (None, 0) and not refused else Stage.FAILED
    edits, _ = patch_edits(patch[0], stage=stage, cwd=patch[3], key_id=call_id)
    for edit in edits:
        if stage is Stage.FAILED:
            edit.error = output.strip() if isinstance(output, str) else f"exit code {code}"
        history.edits.append(PastEdit(edit, patch[1], patch[2], patch[3], None))


def _patch_end(
    history: History,
    payload: dict[str, Any],
    call_id: str,
    patch: tuple[str, float, Turn | None, str | None] | None,
    at: float,
    turn: Turn | None,
    cwd: str | None,
) -> None:
    status = payload.get("status")
    failed = payload.get("success") is False or status in ("failed", "declined")
    stage = Stage.FAILED if failed else Stage.APPLIED
    when, in_turn, where = (patch[1], patch[2], patch[3]) if patch else (at, turn, cwd)
    for path, kind, change in _changes(payload):
        target = absolute(first_text(change, "move_path") or path, where)
        if kind == "delete":
            continue
        if kind == "add":
            content = first_text(change, "content") or ""
            hunks = [HunkInput("", content, line=1)]
            contexts: list[tuple[str | None, str | None]] = [("", "")]
        else:
            found = diff_hunks(first_text(change, "unified_diff") or "")
            hunks = [h for h, _, _ in found]
            contexts = [(b, a) for _, b, a in found]
        if not hunks:
            continue
        edit = Edit(
            path=target,
            hunks=hunks,
            stage=stage,
            key=f"{AGENT}:{call_id}:{target}",
            tool="apply_patch",
            tool_use_id=call_id,
            created_file=kind == "add",
            # "declined": the user said no at the approval prompt; any other failure is the tool's
            error=("declined" if status == "declined" else "patch failed") if failed else None,
        )
        history.edits.append(PastEdit(edit, when, in_turn, where, None, contexts))
