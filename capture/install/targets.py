"""Where each agent reads its hooks from, and the entries capture adds there. Plain data and pure
functions; the FORMATS notes name the documents each follows."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["TARGETS", "Target", "handler_command", "is_ours"]


class Target:
    """One agent's hook settings.

    shape: `grouped` ({"hooks": {Event: [{"matcher", "hooks": [handler]}]}}: Claude Code, Codex,
    Gemini CLI), `flat` ({"hooks": {event: [handler]}}: Cursor, Copilot). events: (event,
    matcher or None). skeleton: the members a new file starts with besides "hooks". own_file:
    the file is capture's alone (Copilot reads every .github/hooks/*.json). local_path: the
    project's personal settings file, which the team does not commit (Claude Code's
    settings.local.json), where the agent has one.
    """

    __slots__ = (
        "agent",
        "project_path",
        "user_path",
        "shape",
        "events",
        "skeleton",
        "own_file",
        "notes",
        "local_path",
    )

    def __init__(
        self,
        agent: str,
        project_path: str,
        user_path: str,
        shape: str,
        events: tuple[tuple[str, str | None], ...],
        skeleton: dict[str, Any] | None = None,
        own_file: bool = False,
        notes: tuple[str, ...] = (),
        local_path: str | None = None,
    ) -> None:
        self.agent = agent
        self.project_path = project_path
        self.user_path = user_path
        self.shape = shape
        self.events = events
        self.skeleton = skeleton or {}
        self.own_file = own_file
        self.notes = notes
        self.local_path = local_path

    def handler(self, command: str, event: str) -> dict[str, Any]:
        """capture's handler for one event, in the agent's own shape."""
        if self.agent == "cursor":
            return {"command": command, "timeout": 30}
        if self.agent == "copilot":
            return {"type": "command", "bash": f"{command} --event {event}", "timeoutSec": 30}
        if self.agent == "gemini":
            # Gemini CLI counts hook timeouts in milliseconds
            return {
                "name": "agent-capture",
                "type": "command",
                "command": command,
                "timeout": 30000,
            }
        return {"type": "command", "command": command, "timeout": 30}

    def entry(self, command: str, event: str, matcher: str | None) -> dict[str, Any]:
        """What goes into the event's list: a matcher group, or the bare handler."""
        handler = self.handler(command, event)
        if self.shape == "flat":
            if matcher:
                handler["matcher"] = matcher
            return handler
        group: dict[str, Any] = {}
        if matcher:
            group["matcher"] = matcher
        group["hooks"] = [handler]
        return group


_CLAUDE_TOOLS = "Edit|Write|MultiEdit|Bash|PowerShell"

TARGETS: dict[str, Target] = {
    "claude-code": Target(
        "claude-code",
        ".claude/settings.json",
        "~/.claude/settings.json",
        "grouped",
        (
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            ("PreToolUse", _CLAUDE_TOOLS),
            # every tool's result: what the agent read and searched is its trajectory
            ("PostToolUse", None),
            ("PostToolUseFailure", None),
            # the only event that carries a denied edit's denial (2.1.19x)
            ("PostToolBatch", None),
            ("Stop", None),
            ("SessionEnd", None),
        ),
        local_path=".claude/settings.local.json",
    ),
    "cursor": Target(
        "cursor",
        ".cursor/hooks.json",
        "~/.cursor/hooks.json",
        "flat",
        (
            ("sessionStart", None),
            ("beforeSubmitPrompt", None),
            ("afterFileEdit", None),
            ("afterTabFileEdit", None),
            ("afterShellExecution", None),
            ("postToolUse", "Shell"),
            ("postToolUseFailure", None),
            ("stop", None),
            ("sessionEnd", None),
        ),
        skeleton={"version": 1},
    ),
    "codex": Target(
        "codex",
        ".codex/hooks.json",
        "~/.codex/hooks.json",
        "grouped",
        (
            ("SessionStart", None),
            ("UserPromptSubmit", None),
            ("PreToolUse", "Bash|apply_patch"),
            ("PostToolUse", None),
            ("Stop", None),
        ),
        notes=(
            "Codex releases that still call hooks experimental need `[features] codex_hooks = "
            "true` in ~/.codex/config.toml; project hooks load only in trusted projects.",
        ),
    ),
    "gemini": Target(
        "gemini",
        ".gemini/settings.json",
        "~/.gemini/settings.json",
        "grouped",
        (
            ("SessionStart", None),
            ("BeforeAgent", None),
            ("BeforeTool", "write_file|replace|run_shell_command"),
            ("AfterTool", "write_file|replace|run_shell_command"),
            ("AfterAgent", None),
            ("SessionEnd", None),
        ),
    ),
    "copilot": Target(
        "copilot",
        ".github/hooks/agent-capture.json",
        "~/.copilot/hooks/agent-capture.json",
        "flat",
        (
            ("sessionStart", None),
            ("userPromptSubmitted", None),
            ("preToolUse", None),
            ("postToolUse", None),
            ("sessionEnd", None),
        ),
        skeleton={"version": 1},
        own_file=True,
        notes=(
            "The Copilot coding agent runs on GitHub's machines: the command installed here "
            "serves Copilot CLI on this machine.",
        ),
    ),
}


def handler_command(handler: Any) -> str | None:
    if not isinstance(handler, dict):
        return None
    for key in ("command", "bash"):
        value = handler.get(key)
        if isinstance(value, str):
            return value
    return None


def is_ours(handler: Any, agent: str) -> bool:
    """A handler capture installed for `agent`: its command runs `capture hook <agent>`."""
    command = handler_command(handler)
    if command is None:
        return False
    pattern = rf"(?:\bcapture['\"]?|-m\s+capture)\s+hook\s+{re.escape(agent)}(?:\s|$)"
    return re.search(pattern, command) is not None
