"""The episode JSON: what `capture episodes --json` prints, and what exports and uploads carry.

The schema is versioned (`schema`); fields are only ever added within a version. The episode
contract (`capture.episode.model.Episode`) defines and documents every field: a field written
here must be named there (`capture episodes --json` and the tests decode with it, strictly).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from capture.edits.evidence import label_of
from capture.episode.vocabulary import EPISODE_SCHEMA
from capture.moments import EARLIEST_READABLE, LATEST_READABLE, formattable
from capture.store.database import Store
from capture.store.late_signal_rows import late_signals
from capture.store.tier_rows import TierChange, tier_histories
from capture.testruns.linking import FailingTest, LinkedRun, run_status, summarize_tests

__all__ = ["EPISODE_SCHEMA", "iso", "load_episodes"]


def iso(ts: float | None) -> str | None:
    """`2026-05-28T20:26:40.123Z`: what `isoformat(timespec="milliseconds")` writes for UTC, with
    `Z`. Microseconds are rounded as `datetime.fromtimestamp` rounds them (half to even), then
    truncated to milliseconds as isoformat does.

    An episode carries some twenty times, most within minutes of each other: the text up to the
    minute is formatted once per minute and cached, the seconds and milliseconds come from
    tables. Less than half the work of formatting every time, which was the largest part of
    loading an episode."""
    if ts is None or not formattable(ts):
        return None  # a stored time no datetime can hold: doctor names its row
    seconds = int(ts)
    # Exactly math.modf's fraction: a float minus its integral part loses nothing.
    us = round((ts - seconds) * 1e6)
    if us >= 1_000_000:
        seconds += 1
        us -= 1_000_000
    elif us < 0:
        seconds -= 1
        us += 1_000_000
    minutes = seconds // 60
    text = _MINUTES.get(minutes)
    if text is None:
        text = _minute(minutes)
    return f"{text}{_SECONDS[seconds % 60]}{_MILLISECONDS[us // 1000]}"


_SECONDS = tuple(f"{second:02d}." for second in range(60))
_MILLISECONDS = tuple(f"{ms:03d}Z" for ms in range(1000))
_MINUTES: dict[int, str] = {}
_DAYS: dict[int, str] = {}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC).toordinal()


def _minute(minutes: int) -> str:
    """`2026-05-28T20:26:` for a count of minutes since the epoch, cached."""
    day, minute = divmod(minutes, 1440)
    date = _DAYS.get(day)
    if date is None:
        date = _day(day)
    text = "%sT%02d:%02d:" % (date, minute // 60, minute % 60)  # noqa: UP031
    if len(_MINUTES) >= 20_000:
        _MINUTES.clear()
    _MINUTES[minutes] = text
    return text


def _day(day: int) -> str:
    d = datetime.fromordinal(_EPOCH + day)
    text = "%04d-%02d-%02d" % (d.year, d.month, d.day)  # noqa: UP031
    if len(_DAYS) > 10_000:
        _DAYS.clear()
    _DAYS[day] = text
    return text


def _in(ids: Sequence[str]) -> str:
    return ",".join("?" * len(ids))


def _chunks(ids: Sequence[str], size: int = 500) -> list[Sequence[str]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def load_episodes(
    store: Store,
    *,
    ids: Sequence[str] | None = None,
    since: float | None = None,
    limit: int | None = None,
    workspace: str | None = None,
) -> list[dict[str, Any]]:
    """Episodes, newest first, as schema dicts."""
    where: list[str] = []
    params: list[Any] = []
    if ids is not None:
        if not ids:
            return []
        where.append(f"e.id IN ({_in(ids)})")
        params.extend(ids)
    if since is not None:
        where.append("e.last_at >= ?")
        params.append(since)
    if workspace is not None:
        where.append("w.root = ?")
        params.append(workspace)
    sql = (
        f"SELECT {_EPISODE_COLUMNS} FROM episodes e LEFT JOIN workspaces w ON w.id = e.workspace_id"
    )
    where.append(_READABLE.format(column="e.started_at"))
    sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY e.started_at DESC, e.id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    # Plain tuples from named columns, not sqlite3.Row: a Row finds a column by comparing its
    # name with each column's in turn, which was a seventh of the loading's cost.
    cursor = store.conn.cursor()
    cursor.row_factory = None
    episodes: list[tuple[Any, ...]] = cursor.execute(sql, params).fetchall()
    episode_ids = [e[0] for e in episodes]

    # Proposal dicts are built as their rows arrive, their hunks and checkpoints lists filled in
    # by the queries after.
    proposals: dict[str, list[dict[str, Any]]] = defaultdict(list)
    recorded: dict[str, tuple[str | None, str | None]] = {}
    edited: dict[str, set[str]] = defaultdict(set)
    parts: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for chunk in _chunks(episode_ids):
        for (
            episode_id, pid, path, state, outcome, reason, similarity, retention, chars_added,
            chars_removed, lines_added, lines_removed, agent, model, tool, source, backfilled,
            created_file, created_at, applied_at, decided_by, settled_at, rules_version, author,
            evidence,
        ) in cursor.execute(
            f"""SELECT episode_id, {_PROPOSAL_COLUMNS} FROM proposals
                WHERE episode_id IN ({_in(chunk)}) AND {_READABLE.format(column="created_at")}
                ORDER BY id""",
            chunk,
        ):  # fmt: skip
            hunks: list[dict[str, Any]] = []
            checkpoints: list[dict[str, Any]] = []
            parts[pid] = (hunks, checkpoints)
            created = iso(created_at)
            applied = None
            if applied_at is not None:
                edited[episode_id].add(path)
                # A proposal applied as it is recorded has the very same time twice.
                applied = created if applied_at == created_at else iso(applied_at)
            proposals[episode_id].append(
                {
                    "id": pid,
                    "file": path,
                    "state": state,
                    "outcome": outcome,
                    "reason": reason,
                    "rules_version": rules_version,
                    "similarity": similarity,
                    "retention": retention,
                    "chars_added": chars_added,
                    "chars_removed": chars_removed,
                    "lines_added": lines_added,
                    "lines_removed": lines_removed,
                    "agent": agent,
                    "model": model,
                    "tool": tool,
                    "source": source,
                    "backfilled": bool(backfilled),
                    "created_file": bool(created_file),
                    "created_at": created,
                    "applied_at": applied,
                    "decided_by": decided_by,
                    "settled_at": iso(settled_at),
                    "hunks": hunks,
                    "checkpoints": checkpoints,
                }
            )
            recorded[pid] = (author, evidence)
    for chunk in _chunks(list(parts)):
        # In the order of the (proposal_id, idx) index: nothing to sort, and each proposal's
        # hunks still come in idx order.
        for pid, old_text, new_text, status in cursor.execute(
            f"""SELECT proposal_id, old_text, new_text, status FROM hunks
                WHERE proposal_id IN ({_in(chunk)}) ORDER BY proposal_id, idx""",
            chunk,
        ):
            parts[pid][0].append({"old_text": old_text, "new_text": new_text, "status": status})
        for (
            pid, window, due_at, observed_at, similarity, retention, outcome, via, reason,
            rules_version, late_seconds,
        ) in cursor.execute(
            f"""SELECT proposal_id, window, due_at, observed_at, similarity, retention, outcome,
                via, reason, rules_version, late_seconds FROM checkpoints
                WHERE proposal_id IN ({_in(chunk)}) ORDER BY window_seconds""",
            chunk,
        ):  # fmt: skip
            parts[pid][1].append(
                {
                    "window": window,
                    "due_at": iso(due_at),
                    "observed_at": iso(observed_at),
                    "similarity": similarity,
                    "retention": retention,
                    "outcome": outcome,
                    "reason": reason,
                    "rules_version": rules_version,
                    "late_seconds": late_seconds,
                    "via": via,
                }
            )
    runs: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    run_ids: dict[str, None] = {}
    for chunk in _chunks(episode_ids):
        for r in cursor.execute(
            f"""SELECT l.episode_id, l.link, {_RUN_COLUMNS} FROM episode_test_runs l
                JOIN test_runs t ON t.id = l.test_run_id WHERE l.episode_id IN ({_in(chunk)})
                AND {_READABLE.format(column="t.started_at")} ORDER BY t.started_at, t.id""",
            chunk,
        ):
            runs[r[0]].append(r)
            run_ids[r[2]] = None
    failing: dict[str, list[FailingTest]] = defaultdict(list)
    for chunk in _chunks(list(run_ids)):
        for run_id, test_id, file, classname in cursor.execute(
            f"""SELECT test_run_id, test_id, file, classname FROM test_results
                WHERE test_run_id IN ({_in(chunk)}) AND outcome IN ('failed', 'error')
                ORDER BY test_run_id, idx""",
            chunk,
        ):
            failing[run_id].append(FailingTest(test_id, file, classname))
    late = late_signals(store.conn, list(parts))
    proposal_tiers = tier_histories(store.conn, "proposal", list(parts))
    for episode_proposals in proposals.values():
        for p in episode_proposals:
            _add_label(p, *recorded[p["id"]])
            signals = late.get(p["id"])
            p["late_signals"] = None if signals is None else signals.as_json(iso)
            p.update(_tier_fields(proposal_tiers.get(p["id"], [])))
    for episode_proposals in proposals.values():
        for p in episode_proposals:
            before = store.before_text(p["id"])
            p["before_text"], p["before_via"] = before if before else (None, None)
    trajectories = store.trajectory_json(episode_ids, iso)
    episode_tiers = tier_histories(store.conn, "episode", episode_ids)
    out = []
    for e in episodes:
        episode = _episode(
            e, proposals.get(e[0], []), edited.get(e[0], set()), runs.get(e[0], []), failing
        )
        episode.update(_tier_fields(episode_tiers.get(e[0], [])))
        episode.update(trajectories[e[0]])
        out.append(episode)
    return out


def _add_label(p: dict[str, Any], author: str | None, evidence: str | None) -> None:
    """What the proposal's label rests on and who made the change (capture.edits.evidence)."""
    label = label_of(
        state=p["state"],
        outcome=p["outcome"],
        reason=p["reason"],
        backfilled=p["backfilled"],
        checkpoints=[
            (c["outcome"], c["via"], c["late_seconds"])
            for c in p["checkpoints"]
            if c["observed_at"] is not None
        ],
        author=author,
        evidence=evidence,
    )
    p["evidence"] = label.evidence.value
    p["evidence_seen"] = label.seen
    p["author"] = label.author.value if label.author is not None else None
    p["undone_by"] = label.undone_by


def _tier_fields(history: list[TierChange]) -> dict[str, Any]:
    """`tier` (the current decision, or None) and `tier_history` (every decision, oldest first)."""
    changes = [
        {
            "tier": c.decision.tier.value,
            "reasons": list(c.decision.reasons),
            "rules_version": c.decision.rules_version,
            "decided_at": iso(c.decided_at),
        }
        for c in history
    ]
    return {"tier": changes[-1] if changes else None, "tier_history": changes}


#: A row whose own time cannot be shown is left out (its row alone; `capture doctor` names it).
_READABLE = f"{{column}} >= {EARLIEST_READABLE!r} AND {{column}} < {LATEST_READABLE!r}"

# The columns each query reads, in the order the loops below unpack them.
_EPISODE_COLUMNS = """e.id, e.agent, e.model, e.session_id, e.turn_id, w.root, e.prompt, e.source,
    e.started_at, e.ended_at, e.settled_at"""
_PROPOSAL_COLUMNS = """id, path, state, outcome, reason, similarity, retention, chars_added,
    chars_removed, lines_added, lines_removed, agent, model, tool, source, backfilled,
    created_file, created_at, applied_at, decided_by, settled_at, rules_version, author,
    evidence"""
_RUN_COLUMNS = """t.id, t.command, t.name, t.source, t.exit_code, t.passed, t.failed, t.errors,
    t.skipped, t.failing_ids, t.started_at, t.duration_s, t.runner, t.results_from, t.report,
    t.cwd, t.shell_exit_code, t.seen_by"""


def _episode(
    e: tuple[Any, ...],
    proposals: list[dict[str, Any]],
    edited_files: set[str],
    runs: list[tuple[Any, ...]],
    failing: dict[str, list[FailingTest]],
) -> dict[str, Any]:
    (
        episode_id, agent, model, session_id, turn_id, root, prompt, source, started_at,
        ended_at, settled_at,
    ) = e  # fmt: skip
    linked: list[LinkedRun] = []
    test_runs: list[dict[str, Any]] = []
    for (
        _, link, run_id, command, name, run_source, exit_code, passed, failed, errors, skipped,
        failing_ids, run_started_at, duration_s, runner, results_from, report, cwd,
        shell_exit_code, seen_by,
    ) in runs:  # fmt: skip
        status = run_status(
            exit_code=exit_code,
            passed=passed,
            failed=failed,
            errors=errors,
            skipped=skipped,
            runner=runner,
        )
        linked.append(
            LinkedRun(run_id, run_started_at, status, link, tuple(failing.get(run_id, ())))
        )
        test_runs.append(
            {
                "id": run_id,
                "command": command,
                "name": name,
                "source": run_source,
                "exit_code": exit_code,
                "passed": passed,
                "failed": failed,
                "errors": errors,
                "skipped": skipped,
                "failing_ids": _json_list(failing_ids),
                "started_at": iso(run_started_at),
                "duration_s": duration_s,
                "status": status,
                "link": link,
                "runner": runner,
                "results_from": results_from,
                "report": report,
                "cwd": cwd,
                "shell_exit_code": shell_exit_code,
                "seen_by": seen_by.split(",") if seen_by else [run_source],
            }
        )
    tests = summarize_tests(linked, edited_files=edited_files, settled_at=settled_at)
    return {
        "schema": EPISODE_SCHEMA,
        "id": episode_id,
        "agent": agent,
        "model": model,
        "session_id": session_id,
        "turn_id": turn_id,
        "workspace": root,
        "prompt": prompt,
        "source": source,
        "started_at": iso(started_at),
        "ended_at": iso(ended_at),
        "settled_at": iso(settled_at),
        "proposals": proposals,
        "test_runs": test_runs,
        "tests": tests.as_json(iso),
    }


def _json_list(text: str | None) -> Any:
    if not text:
        return []
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # what orjson refuses (a lone surrogate) the json module reads
        return json.loads(text)
