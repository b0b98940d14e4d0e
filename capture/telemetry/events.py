"""Plain values the receiver hands around: one telemetry event, and what an agent's event says
about a proposal (a decision on one tool call)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["IDENTITY_KEYS", "Decision", "TelemetryEvent", "is_identity"]

#: Attributes naming a person or an account: dropped on receipt, never stored. The agents
#: attach them to every record (Claude Code: user.email, user.account_uuid, organization.id;
#: Codex: user.email, user.account_id; Gemini CLI: user.email, installation.id).
IDENTITY_KEYS = frozenset(
    {
        "user.email",
        "user.id",
        "user.name",
        "user.account_uuid",
        "user.account_id",
        "user.full_name",
        "enduser.id",
        "organization.id",
        "organization.name",
        "org.id",
        "account.id",
        "installation.id",
        "host.name",
        "github.user",
        "github.login",
    }
)


def is_identity(key: str) -> bool:
    lowered = key.lower()
    return lowered in IDENTITY_KEYS or lowered.endswith((".email", "_email"))


@dataclass(frozen=True, slots=True)
class TelemetryEvent:
    """One log record or span, its attributes merged over its resource's (identity dropped)."""

    name: str
    attributes: dict[str, Any]
    at: float | None = None
    service: str | None = None
    body: Any = None


@dataclass(frozen=True, slots=True)
class Decision:
    """An agent's report that a tool call was accepted, rejected or modified, and by whom.

    `explicit`: a person decided (a user's answer in the agent's dialog); an approval by
    configuration, a hook or an automated reviewer is not explicit."""

    agent: str
    decision: str  # accept | reject | modify
    explicit: bool
    source: str | None = None
    session_id: str | None = None
    call_id: str | None = None
    tool: str | None = None
    at: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)
