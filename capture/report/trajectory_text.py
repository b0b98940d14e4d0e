"""An episode's trajectory as lines a person reads (`capture show`): each step on its line, a
long text folded to its first lines and a count of the rest, the harness's messages marked."""

from __future__ import annotations

from typing import Any

__all__ = ["FOLD_LINES", "task_line", "trajectory_lines"]

#: the lines of a result or message shown before the rest is folded
FOLD_LINES = 3
_WIDTH = 160


def _folded(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = text.splitlines() or [""]
    shown = [indent + (line if len(line) <= _WIDTH else line[:_WIDTH] + " …") for line in lines]
    if len(lines) <= FOLD_LINES:
        return shown
    return [*shown[:FOLD_LINES], f"{indent}… {len(lines) - FOLD_LINES} more line(s)"]


def _call(step: dict[str, Any]) -> str:
    given = step.get("path") or step.get("input") or ""
    one = " ".join(str(given).split())
    return one if len(one) <= 120 else one[:120] + " …"


def task_line(episode: dict[str, Any]) -> str | None:
    task = episode.get("task")
    if not task:
        return None
    first = " ".join(task.split())
    first = first if len(first) <= 200 else first[:200] + " …"
    return f"task      ({episode.get('task_source')}) {first}"


def trajectory_lines(trajectory: dict[str, Any] | None) -> list[str]:
    if not trajectory or not trajectory.get("steps"):
        return []
    counts = ", ".join(f"{n} {tool}" for tool, n in sorted(trajectory["tool_calls"].items()))
    out = ["", f"trajectory: {len(trajectory['steps'])} step(s); tool calls: {counts or 'none'}"]
    for step in trajectory["steps"]:
        at = (step.get("at") or "")[11:19]
        side = " [subagent]" if step.get("subagent") else ""
        cut = " [cut]" if step.get("truncated") else ""
        if step["kind"] == "tool":
            failed = " (failed)" if step.get("is_error") else ""
            out.append(f"  {at} {step.get('tool')}{failed}{side}{cut}  {_call(step)}")
            out += _folded(step.get("text"), "      | ")
        else:
            who = f"harness: {step['harness']}" if step.get("harness") else step["kind"]
            out.append(f"  {at} {who}{side}{cut}")
            out += _folded(step.get("text"), "      > ")
    return out
