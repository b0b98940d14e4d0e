"""One module per coding agent, each a pure reader of that agent's hook payloads.

`read_payload(agent, payload, env)` returns a `Reading` (see `capture.hooks.agents.facts`). Modules
are imported only for the agent being read: `capture hook` runs once per agent tool call.

Pure: payloads in, facts out; no file is read, nothing is written. The importers read transcripts
with the same readers.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from capture.hooks.agents.facts import Reading

__all__ = ["AGENTS", "read_payload"]

#: agent name on the command line -> module holding `read(payload, env, event=None) -> Reading`
AGENTS: dict[str, str] = {
    "claude-code": "capture.hooks.agents.claude_code",
    "cursor": "capture.hooks.agents.cursor",
    "codex": "capture.hooks.agents.codex",
    "gemini": "capture.hooks.agents.gemini",
    "copilot": "capture.hooks.agents.copilot",
}


def read_payload(
    agent: str, payload: dict[str, Any], env: Mapping[str, str], event: str | None = None
) -> Reading:
    module = importlib.import_module(AGENTS[agent])
    reading: Reading = module.read(payload, env, event)
    return reading
