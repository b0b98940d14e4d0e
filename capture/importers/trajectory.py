"""A transcript's trajectory into the store: every step of the session in order, each in the
episode of its turn (when that turn has one), each turn's task statement, and the file as each
edit found it.

The file before an edit comes from the agent's own record when it kept one (Claude Code's
`originalFile`), else from what the transcript showed of that file earlier: the text an
earlier edit left, or a whole-file read. Per turn, the texts kept are capped
(`TURN_CAP_CHARS`); past the cap a text keeps its head and says how much was cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from capture.hooks.agents.trajectory import Step
from capture.importers.records import History, PastEdit, Turn
from capture.recording.recorder import Recorder
from capture.store.trajectory_rows import StepRow

__all__ = ["TURN_CAP_CHARS", "before_of", "step_rows", "write_trajectory"]

#: the characters of text one turn's trajectory keeps before texts are cut
TURN_CAP_CHARS = 8_000_000
#: what a cut text keeps
_HEAD = 4_000

_NUMBERED = re.compile(r"^ *\d+\t", re.MULTILINE)


def _cut(text: str | None, budget: list[int]) -> tuple[str | None, bool]:
    if text is None:
        return None, False
    if len(text) <= budget[0]:
        budget[0] -= len(text)
        return text, False
    kept = text[: min(_HEAD, len(text) // 2)]
    budget[0] = max(budget[0] - len(kept), 0)
    return f"{kept}\n[capture: cut here, {len(text) - len(kept)} more characters]", True


def step_rows(
    history: History, episodes: Mapping[str, str], *, source: str = "import"
) -> list[StepRow]:
    """The history's steps as rows, with the episode of their turn where it has one."""
    budgets: dict[int, list[int]] = {}
    rows = []
    for step, turn in history.steps:
        budget = budgets.setdefault(id(turn), [TURN_CAP_CHARS])
        text, cut_text = _cut(step.text, budget)
        given, cut_input = _cut(step.input, budget)
        rows.append(
            StepRow(
                key=step.key,
                at=step.at,
                kind=step.kind,
                text=text,
                tool=step.tool,
                call_id=step.call_id,
                input=given,
                is_error=step.is_error,
                harness=step.harness,
                parent=step.parent,
                spawned=step.spawned,
                path=step.path,
                done_at=step.done_at,
                truncated=cut_text or cut_input,
                episode_id=episodes.get(turn.turn_id) if turn else None,
                session_id=history.session_id,
                source=source,
            )
        )
    return rows


def _whole_read(step: Step) -> str | None:
    """The file's text from a read of all of it (Claude Code numbers its lines)."""
    if step.kind != "tool" or step.tool != "Read" or step.is_error or not step.text:
        return None
    try:
        given = json.loads(step.input or "{}")
    except ValueError:
        return None
    if not isinstance(given, dict) or given.get("offset") or given.get("limit"):
        return None
    lines = step.text.split("\n")
    if not lines or not _NUMBERED.match(lines[0]):
        return None
    body = [_NUMBERED.sub("", line, count=1) for line in lines if _NUMBERED.match(line)]
    return "\n".join(body)


def before_of(history: History, past: PastEdit) -> tuple[str, str] | None:
    """The whole file as the edit found it and where that came from, when the history says."""
    edit = past.edit
    if edit.original is not None:
        return edit.original, "payload"
    if edit.created_file:
        return None
    found: tuple[float, str, str] | None = None
    for other in history.edits:
        if other is past or other.edit.path != edit.path or other.after is None:
            continue
        if other.at < past.at and (found is None or other.at >= found[0]):
            found = (other.at, other.after, "earlier-edit")
    for step, _ in history.steps:
        if step.path == edit.path and step.at < past.at and step.call_id != edit.tool_use_id:
            text = _whole_read(step)
            if text is not None and (found is None or step.at >= found[0]):
                found = (step.at, text, "earlier-read")
    return None if found is None else (found[1], found[2])


def _tasks(history: History) -> Iterable[tuple[Turn, str, str]]:
    for turn in history.turns:
        if turn.task is not None and turn.task_source is not None:
            yield turn, turn.task, turn.task_source


def write_trajectory(
    recorder: Recorder,
    history: History,
    episodes: Mapping[str, str],
    proposals: Iterable[tuple[str, PastEdit]],
    *,
    now: float,
) -> None:
    """Record the history's steps, tasks and files before each edit (inside the caller's
    transaction)."""
    missing = [t.turn_id for t in history.turns if t.turn_id not in episodes]
    if missing:
        # turns whose episodes an earlier import or a live hook made
        found = recorder.store.episodes_of_turns(history.agent, history.session_id, missing)
        episodes = {**found, **episodes}
    recorder.steps(step_rows(history, episodes), now=now)
    for turn, task, source in _tasks(history):
        episode = episodes.get(turn.turn_id)
        if episode is not None:
            recorder.task(episode, task, source)
    for proposal_id, past in proposals:
        before = before_of(history, past)
        if before is not None:
            recorder.before_text(proposal_id, before[0], via=before[1], now=now)
