"""A hook call's part of the trajectory: the typed prompt or the tool call (with its input and
result) its payload shows, recorded in the episode of the agent's current turn; the task of a
turn its prompt opens; the file before an edit when the payload carries it.

Runs where the queue is applied, never in the hook's fast lane.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from capture.config import Config
from capture.hooks.agents.facts import Call
from capture.hooks.agents.fields import escape_surrogates
from capture.hooks.agents.trajectory import (
    TASK_SOURCES,
    hook_steps,
    is_continuation,
    original_file,
)
from capture.recording.recorder import Recorder
from capture.store.trajectory_rows import StepRow

__all__ = ["record_hook_steps"]

_EARLIER = TASK_SOURCES[1]


def record_hook_steps(
    recorder: Recorder,
    config: Config,
    call: Call,
    raw: str,
    workspace_id: int | None,
    *,
    now: float,
    proposals: Sequence[str] = (),
    problems: list[str] | None = None,
) -> int:
    """Record the payload's steps (inside the caller's transaction); how many were new.
    `proposals`: those the payload's edit made, which keep the file as it found it. What
    cannot be kept is said in `problems`, never raised: the payload's edits and runs are
    recorded whatever becomes of its trajectory."""
    try:
        return _record(recorder, config, call, raw, workspace_id, now=now, proposals=proposals)
    except (ValueError, TypeError, UnicodeError) as exc:
        if problems is not None:
            problems.append(f"trajectory: {type(exc).__name__}: {exc}")
        return 0


def _record(
    recorder: Recorder,
    config: Config,
    call: Call,
    raw: str,
    workspace_id: int | None,
    *,
    now: float,
    proposals: Sequence[str],
) -> int:
    try:
        payload = json.loads(raw)
    except ValueError:
        return 0
    if "\\u" in raw:
        # a lone surrogate cannot be stored as text: kept escaped, as the readers keep it
        payload = escape_surrogates(payload)
    before = original_file(payload)
    if before is not None:
        for proposal_id in proposals:
            recorder.before_text(proposal_id, before, via="payload", now=now)
    steps = hook_steps(payload, now)
    if not steps:
        return 0
    store = recorder.store
    episode = None
    if workspace_id is not None:
        episode = store.current_episode(
            workspace_id=workspace_id,
            agent=call.agent,
            session_id=call.session_id,
            turn_id=call.turn_id,
            since=now - config.episode_gap,
        )
    rows = [
        StepRow(
            key=f"{call.agent}:{s.key}",
            at=s.at,
            kind=s.kind,
            text=s.text,
            tool=s.tool,
            call_id=s.call_id,
            input=s.input,
            is_error=s.is_error,
            harness=s.harness,
            path=s.path,
            spawned=s.spawned,
            done_at=s.done_at,
            episode_id=episode,
            session_id=call.session_id,
            source="hook",
        )
        for s in steps
    ]
    added = recorder.steps(rows, now=now)
    prompt = steps[0]
    if episode is not None and prompt.kind == "user":
        if prompt.harness is None and not is_continuation(prompt.text):
            recorder.task(episode, prompt.text, TASK_SOURCES[0])
        else:
            found = store.last_task(call.agent, call.session_id, episode)
            if found is not None:
                recorder.task(episode, found[0], _EARLIER if found[1] == "prompt" else found[1])
    return added
