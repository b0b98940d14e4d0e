"""One module per coding agent, each a pure reader of that agent's hook payloads.

`read_payload(agent, payload, env)` returns a `Reading` (see `capture.agents.facts`). Modules are
imported only for the agent being read: `capture hook` runs once per agent tool call.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from capture.agents.facts import Reading

__all__ = ["AGENTS", "read_payload"]

#: agent name on the command line -> module holding `read(payload, env, event=None) -> Reading`
AGENTS: dict[str, str] = {
    "claude-code": "capture.agents.claude_code",
    "cursor": "capture.agents.cursor",
    "codex": "capture.agents.codex",
    "gemini": "capture.agents.gemini",
    "copilot": "capture.agents.copilot",
}


def read_payload(
    agent: str, payload: dict[str, Any], env: Mapping[str, str], event: str | None = None
) -> Reading:
    module = importlib.import_module(AGENTS[agent])
    reading: Reading = module.read(payload, env, event)
    return reading
