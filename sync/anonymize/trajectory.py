"""The trajectory and task of an episode as they leave the machine, per level.

Metrics: the task's length and the count of calls per tool name, nothing the agent read or
wrote. Redacted and full: every step, its texts (the input, the message or result) through the
same text stage as the prompt and the hunks, the ids hashed below full, the files as the
proposals' files are. A proposal's file before the edit is a text like its hunks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from capture.episode.vocabulary import Level

__all__ = ["shared_before", "shared_task", "shared_trajectory"]

Text = Callable[[str | None, str], str | None]


def shared_task(episode: dict[str, Any], level: Level, text: Text) -> dict[str, Any]:
    task = episode.get("task")
    return {
        "task": text(task, "") if level.carries_text else None,
        "task_source": episode.get("task_source"),
    }


def shared_before(source: dict[str, Any], out: dict[str, Any], level: Level, text: Text) -> None:
    before = source.get("before_text")
    out["before_text"] = text(before, source.get("file") or "") if level.carries_text else None
    out["before_via"] = source.get("before_via")


def shared_trajectory(
    trajectory: dict[str, Any] | None,
    level: Level,
    text: Text,
    hashed: Callable[[str | None], str | None],
    path: Callable[[str], str],
    copy: Callable[[Any], Any],
) -> dict[str, Any] | None:
    if not trajectory:
        return None
    counts = {copy(str(k)): int(v) for k, v in (trajectory.get("tool_calls") or {}).items()}
    out: dict[str, Any] = {
        "tool_calls": counts,
        "steps": [],
        "truncated": bool(trajectory.get("truncated")),
    }
    if not level.carries_text:
        return out
    full = level is Level.FULL
    for step in trajectory.get("steps") or ():
        where = step.get("path")
        out["steps"].append(
            {
                "kind": copy(step.get("kind")),
                "at": step.get("at"),
                "tool": copy(step.get("tool")),
                "call_id": copy(step.get("call_id")) if full else hashed(step.get("call_id")),
                "input": text(step.get("input"), ""),
                "text": text(step.get("text"), where or ""),
                "is_error": bool(step.get("is_error")),
                "harness": copy(step.get("harness")),
                "subagent": hashed(step.get("subagent")),
                "spawned": hashed(step.get("spawned")),
                "path": path(where) if where else None,
                "truncated": bool(step.get("truncated")),
            }
        )
    return out
