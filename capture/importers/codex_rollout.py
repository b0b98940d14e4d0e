"""Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Source-only format (no stability promise), read leniently: `session_meta`, `turn_context`,
`response_item` (user messages, `custom_tool_call` apply_patch, `function_call` shell calls and
their outputs) and `event_msg` (`user_message`, `patch_apply_end` with per-file diffs,
`exec_command_end` with the exit code). `patch_apply_end.changes` is tagged either way it has
been (`{"type": "update", ...}` or `{"update": {...}}`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from capture.hooks.agents.codex import command_text, patch_edits
from capture.hooks.agents.facts import Command, Edit, Stage
from capture.hooks.agents.fields import absolute, as_object, exit_code_in, first_text, number
from capture.importers.records import History, PastEdit, PastRun, Turn, timestamp
from capture.model import HunkInput

__all__ = ["diff_hunks", "read_rollout"]

AGENT = "codex"
_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
SHELL_CALLS = frozenset({"shell", "exec_command", "container.exec", "local_shell", "shell_command"})


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
    for raw in lines:
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            history.bad_lines += 1
            continue
        payload = line.get("payload") if isinstance(line, dict) else None
        if not isinstance(payload, dict):
            history.bad_lines += 1
            continue
        at = last_at = timestamp(line.get("timestamp"), last_at)
        kind = line.get("type")
        ptype = payload.get("type")
        if kind == "session_meta":
            history.session_id = first_text(payload, "id") or history.session_id
            cwd = first_text(payload, "cwd") or cwd
            history.cwd = history.cwd or cwd
        elif kind == "turn_context":
            cwd = first_text(payload, "cwd") or cwd
            model = first_text(payload, "model") or model
            turn_id = first_text(payload, "turn_id") or f"{history.session_id}:{at}"
            turn = Turn(turn_id, None, at, model)
            history.turns.append(turn)
        elif kind == "event_msg" and ptype == "user_message":
            text = first_text(payload, "message")
            if turn is not None and turn.prompt is None and text:
                turn.prompt = text
        elif kind == "response_item" and ptype == "custom_tool_call":
            if payload.get("name") == "apply_patch" and isinstance(payload.get("input"), str):
                patches[str(payload.get("call_id"))] = (payload["input"], at, turn, cwd)
        elif kind == "response_item" and ptype in ("function_call", "local_shell_call"):
            args = as_object(payload.get("arguments")) or as_object(payload.get("action")) or {}
            command = command_text(args.get("cmd")) or command_text(args.get("command"))
            name = payload.get("name") or "local_shell"
            if command and name in SHELL_CALLS:
                workdir = first_text(args, "workdir", "working_directory") or cwd
                shells[str(payload.get("call_id"))] = (command, at, turn, workdir)
        elif kind == "event_msg" and ptype == "patch_apply_end":
            call_id = str(payload.get("call_id"))
            patch = patches.pop(call_id, None)
            _patch_end(history, payload, call_id, patch, at, turn, cwd)
        elif kind == "response_item" and ptype == "custom_tool_call_output":
            call_id = str(payload.get("call_id"))
            patch = patches.pop(call_id, None)
            if patch is not None:
                outcome = as_object(payload.get("output")) or {}
                code = number(outcome.get("metadata"), "exit_code")
                stage = Stage.APPLIED if code in (None, 0) else Stage.FAILED
                edits, _ = patch_edits(patch[0], stage=stage, cwd=patch[3], key_id=call_id)
                for edit in edits:
                    history.edits.append(PastEdit(edit, patch[1], patch[2], patch[3], None))
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
    return history


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
        )
        history.edits.append(PastEdit(edit, when, in_turn, where, None, contexts))
