"""The five agents as the corpus drives them: each call writes the file as the agent's tool does
and sends the hook payloads that agent sends, in the shapes of its documented examples
(../fixtures/agent-formats/examples)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from tests.support.outcome_corpus.world import World

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}{next(_ids):06d}"


class Turn:
    """One agent turn: a prompt, tool calls, the end of the turn."""

    def __init__(self, world: World, agent: str, session: str | None = None) -> None:
        self.world = world
        self.agent = agent
        self.session = session or _id("session-")
        self.turn = _id("turn-")

    # ------------------------------------------------------------------ turn boundaries

    def prompt(self, text: str = "make it better") -> Turn:
        if self.agent in ("claude-code", "codex"):
            self._send({"hook_event_name": "UserPromptSubmit", "prompt": text})
        elif self.agent == "cursor":
            self._send({"hook_event_name": "beforeSubmitPrompt", "prompt": text})
        elif self.agent == "gemini":
            self._send({"hook_event_name": "BeforeAgent", "prompt": text})
        elif self.agent == "copilot":
            self._send({"prompt": text}, event="userPromptSubmitted")
        return self

    def stop(self) -> None:
        event = {"cursor": "stop", "gemini": "AfterAgent", "copilot": "sessionEnd"}
        if self.agent == "copilot":
            self._send({"reason": "complete"}, event="sessionEnd")
        else:
            self._send({"hook_event_name": event.get(self.agent, "Stop")})

    def _send(self, payload: dict[str, Any], event: str | None = None) -> None:
        ids: dict[str, Any]
        if self.agent == "claude-code":
            ids = {"session_id": self.session, "prompt_id": self.turn}
        elif self.agent == "codex":
            ids = {"session_id": self.session, "turn_id": self.turn, "model": "gpt-5.5"}
        elif self.agent == "cursor":
            ids = {
                "conversation_id": self.session,
                "generation_id": self.turn,
                "workspace_roots": [str(self.world.root)],
            }
        elif self.agent == "gemini":
            ids = {"session_id": self.session}
        else:
            ids = {"sessionId": self.session, "timestamp": 1787304672455}
        self.world.hook(self.agent, {**ids, **payload}, event)

    # ------------------------------------------------------------------ edits

    def edit(
        self,
        relative: str,
        old: str,
        new: str,
        *,
        pre: bool = True,
        then: Callable[[], None] | None = None,
    ) -> None:
        """Replace the one occurrence of `old` in the file by `new`, as this agent's edit tool;
        `then` runs between the write and the post-tool-use hook."""
        world = self.world
        path = str(world.path(relative))
        before = world.read(relative)
        assert before.count(old) == 1, f"{old!r} must occur once in {relative}"
        after = before.replace(old, new)
        tool_id = _id("toolu_")
        if self.agent == "claude-code":
            tool_input = {"file_path": path, "old_string": old, "new_string": new}
            if pre:
                self._send(
                    {
                        "hook_event_name": "PreToolUse",
                        "tool_name": "Edit",
                        "tool_input": tool_input,
                        "tool_use_id": tool_id,
                    }
                )
            world.write(relative, after)
            if then is not None:
                then()
            self._send(
                {
                    "hook_event_name": "PostToolUse",
                    "tool_name": "Edit",
                    "tool_input": {**tool_input, "replace_all": False},
                    "tool_response": {
                        "filePath": path,
                        "oldString": old,
                        "newString": new,
                        "originalFile": before,
                        "userModified": False,
                        "replaceAll": False,
                    },
                    "tool_use_id": tool_id,
                }
            )
        elif self.agent == "cursor":
            world.write(relative, after)
            if then is not None:
                then()
            self._send(
                {
                    "hook_event_name": "afterFileEdit",
                    "file_path": path,
                    "edits": [{"old_string": old, "new_string": new}],
                }
            )
        elif self.agent == "codex":
            patch = _apply_patch(relative, before, old, new)
            call = {
                "tool_name": "apply_patch",
                "tool_use_id": tool_id,
                "tool_input": {"command": patch},
            }
            if pre:
                self._send({"hook_event_name": "PreToolUse", **call})
            world.write(relative, after)
            if then is not None:
                then()
            self._send(
                {
                    "hook_event_name": "PostToolUse",
                    **call,
                    "tool_response": {
                        "output": f"Success. Updated the following files:\nM {relative}\n"
                    },
                }
            )
        elif self.agent == "gemini":
            tool_input = {"file_path": path, "old_string": old, "new_string": new}
            if pre:
                self._send(
                    {
                        "hook_event_name": "BeforeTool",
                        "tool_name": "replace",
                        "tool_input": tool_input,
                    }
                )
            world.write(relative, after)
            if then is not None:
                then()
            self._send(
                {
                    "hook_event_name": "AfterTool",
                    "tool_name": "replace",
                    "tool_input": tool_input,
                    "tool_response": {
                        "llmContent": f"Successfully modified file: {path} (1 replacements).",
                        "returnDisplay": {
                            "fileName": relative.rsplit("/", 1)[-1],
                            "originalContent": before,
                            "newContent": after,
                        },
                    },
                }
            )
        elif self.agent == "copilot":
            args = {"path": relative, "old_str": old, "new_str": new}
            if pre:
                self._send({"toolName": "edit", "toolArgs": json.dumps(args)}, event="preToolUse")
            world.write(relative, after)
            if then is not None:
                then()
            self._send(
                {
                    "toolName": "edit",
                    "toolArgs": json.dumps(args),
                    "toolResult": {"resultType": "success", "textResultForLlm": "File edited."},
                },
                event="postToolUse",
            )
        else:  # pragma: no cover - the corpus names only the five
            raise ValueError(self.agent)

    def write(self, relative: str, content: str) -> None:
        """Write the whole file, as this agent's write tool (Claude Code's Write)."""
        world = self.world
        path = str(world.path(relative))
        existed = world.path(relative).exists()
        before = world.read(relative) if existed else None
        tool_id = _id("toolu_")
        assert self.agent == "claude-code", "the corpus writes whole files with Claude Code"
        tool_input = {"file_path": path, "content": content}
        self._send(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Write",
                "tool_input": tool_input,
                "tool_use_id": tool_id,
            }
        )
        world.write(relative, content)
        self._send(
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "Write",
                "tool_input": tool_input,
                "tool_response": {
                    "type": "update" if existed else "create",
                    "filePath": path,
                    "content": content,
                    "originalFile": before,
                    "structuredPatch": [],
                },
                "tool_use_id": tool_id,
            }
        )

    def denied_edit(self, relative: str, old: str, new: str) -> None:
        """Announced, then declined at the permission prompt: nothing is written."""
        path = str(self.world.path(relative))
        assert self.agent == "claude-code"
        self._send(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": path, "old_string": old, "new_string": new},
                "tool_use_id": _id("toolu_"),
            }
        )

    def bash(self, command: str, stdout: str, duration_ms: int = 1800) -> None:
        assert self.agent == "claude-code"
        self._send(
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": command, "description": "run the tests"},
                "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False},
                "tool_use_id": _id("toolu_"),
                "duration_ms": duration_ms,
            }
        )


def _apply_patch(relative: str, before: str, old: str, new: str) -> str:
    """A Codex apply_patch text replacing `old` by `new` (whole lines), with a context line."""
    lines = before.splitlines(keepends=True)
    start = before.index(old)
    first = before.count("\n", 0, start)
    last = before.count("\n", 0, start + len(old.rstrip("\n")))
    old_lines = lines[first : last + 1]
    new_block = "".join(old_lines).replace(old, new)
    body = ["*** Begin Patch", f"*** Update File: {relative}"]
    body.append(f"@@ {lines[first - 1].rstrip()}" if first > 0 else "@@")
    body += ["-" + line.rstrip("\n") for line in old_lines]
    body += ["+" + line for line in new_block.splitlines()]
    body.append("*** End Patch")
    return "\n".join(body) + "\n"
