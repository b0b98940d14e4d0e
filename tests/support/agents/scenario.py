"""Scenario files: what the scripted model answers, step by step, in words no agent owns.

A step is one of
  {"write": PATH, "content": TEXT}                 create or overwrite a file
  {"edit": PATH, "old": TEXT, "new": TEXT}         replace whole lines of a file
  {"shell": COMMAND}                               run a command
  {"text": TEXT}                                   the final answer; the turn ends
A write or edit step may add "via": "shell" (Codex: the patch goes through its shell tool as an
`apply_patch` heredoc). Each agent's tool call for a step is worked out here: Claude Code's
Write/Edit/Bash, Codex's apply_patch and exec_command, Gemini CLI's write_file/replace/
run_shell_command. Paths are relative to the session's repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["SCENARIOS", "Step", "apply_patch_text", "for_agent", "load", "tool_call"]

SCENARIOS = Path(__file__).resolve().parent / "scenarios"

Step = dict[str, Any]


def load(name: str) -> dict[str, Any]:
    """A scenario file: {"prompt", "steps", "truth", ...}."""
    value: dict[str, Any] = json.loads((SCENARIOS / f"{name}.json").read_text())
    return value


def _lines(prefix: str, text: str) -> str:
    return "".join(f"{prefix}{line}\n" for line in text.splitlines())


def apply_patch_text(step: Step) -> str:
    """The step as Codex's apply_patch text (an edit's old and new texts are whole lines)."""
    if "write" in step:
        body = f"*** Add File: {step['write']}\n" + _lines("+", step["content"])
    else:
        body = (
            f"*** Update File: {step['edit']}\n@@\n"
            + _lines("-", step["old"])
            + _lines("+", step["new"])
        )
    return "*** Begin Patch\n" + body + "*** End Patch\n"


def for_agent(agent: str, steps: list[Step]) -> list[Step]:
    """The steps as `agent` must take them: Claude Code edits a file only after reading it."""
    if agent != "claude-code":
        return list(steps)
    out: list[Step] = []
    for step in steps:
        if "edit" in step:
            out.append({"read": step["edit"]})
        out.append(step)
    return out


def tool_call(agent: str, step: Step, cwd: str) -> tuple[str, Any]:
    """(tool name, input) of the call `agent` makes for `step`; for Codex the input of a custom
    tool is its raw text, of a function tool a dict."""

    def path(name: str) -> str:
        return f"{cwd}/{name}"

    if agent == "claude-code":
        if "write" in step:
            return "Write", {"file_path": path(step["write"]), "content": step["content"]}
        if "edit" in step:
            return "Edit", {
                "file_path": path(step["edit"]),
                "old_string": step["old"],
                "new_string": step["new"],
            }
        if "read" in step:
            return "Read", {"file_path": path(step["read"])}
        return "Bash", {"command": step["shell"], "description": "run it"}
    if agent == "gemini":
        if "write" in step:
            return "write_file", {"file_path": path(step["write"]), "content": step["content"]}
        if "edit" in step:
            return "replace", {
                "file_path": path(step["edit"]),
                "instruction": "as scripted",
                "old_string": step["old"],
                "new_string": step["new"],
            }
        return "run_shell_command", {"command": step["shell"], "description": "run it"}
    if agent == "codex":
        if "write" in step or "edit" in step:
            patch = apply_patch_text(step)
            if step.get("via") == "shell":
                return "exec_command", {"cmd": "apply_patch <<'EOF'\n" + patch + "EOF\n"}
            return "apply_patch", patch
        return "exec_command", {"cmd": step["shell"]}
    raise ValueError(f"no tool calls for agent {agent!r}")
