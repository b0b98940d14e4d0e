"""Agent Trace attribution records (agent-trace.dev, version 0.1.0) for an episode's edits.

One record per episode: for each file, one conversation (the episode), its contributor (`ai`, or
`mixed` where the user changed the agent's text) and the line ranges of the agent's text as the
store last saw them. Only hunks whose region is still tracked have ranges; an episode with none
has no record. The store keeps no commit for a region, so records carry no `vcs`: their line
numbers are those of the file when the region was last observed, and each range has a
`content_hash` of its text for finding it again.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from capture.export.examples import tier_of

__all__ = ["AGENT_TRACE_VERSION", "trace_record"]

AGENT_TRACE_VERSION = "0.1.0"
_NAMESPACE = uuid.UUID("6f2b0a52-4c1e-4a59-9d53-3f0d7f0c9a11")


def trace_record(episode: dict[str, Any], tool_version: str) -> dict[str, Any] | None:
    files: dict[str, list[dict[str, Any]]] = {}
    contributors: dict[str, str] = {}
    for p in episode.get("proposals") or ():
        path = p.get("file")
        if not isinstance(path, str):
            continue
        for context in p.get("hunk_context") or ():
            start, end = context.get("start_line"), context.get("end_line")
            if not isinstance(start, int) or not isinstance(end, int):
                continue
            text = context.get("final")
            rng: dict[str, Any] = {"start_line": start, "end_line": max(start, end)}
            if isinstance(text, str):
                digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
                rng["content_hash"] = f"sha256:{digest[:16]}"
            files.setdefault(path, []).append(rng)
            if p.get("outcome") == "edited" or tier_of(p) == "edited":
                contributors[path] = "mixed"
            contributors.setdefault(path, "ai")
    if not files:
        return None
    model = episode.get("model")
    out_files = []
    for path, ranges in files.items():
        contributor: dict[str, Any] = {"type": contributors[path]}
        if isinstance(model, str) and model:
            contributor["model_id"] = model[:250]
        out_files.append(
            {"path": path, "conversations": [{"contributor": contributor, "ranges": ranges}]}
        )
    return {
        "version": AGENT_TRACE_VERSION,
        "id": str(uuid.uuid5(_NAMESPACE, str(episode.get("id")))),
        "timestamp": episode.get("started_at"),
        "tool": {"name": "agent-capture", "version": tool_version},
        "files": out_files,
        "metadata": {
            "dev.agent-capture": {
                "episode_id": episode.get("id"),
                "agent": episode.get("agent"),
                "tier": tier_of(episode),
            }
        },
    }
