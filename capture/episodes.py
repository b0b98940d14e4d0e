"""The episode JSON: what `capture episodes --json` prints, and what exports and uploads carry.

The schema is versioned (`schema`); fields are only ever added within a version. The README's
"Episode schema" section documents every field.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from capture.linking import FailingTest, LinkedRun, run_status, summarize_tests
from capture.store import Store

__all__ = ["EPISODE_SCHEMA", "iso", "load_episodes"]

EPISODE_SCHEMA = "agent-capture/episode@1"


def iso(ts: float | None) -> str | None:
    """`2026-05-28T20:26:40.123Z`: what `isoformat(timespec="milliseconds")` writes for UTC, with
    `Z`. Formatted from whole seconds and a cached date, a third faster than via datetime (an
    episode carries tens of times); microseconds are rounded as `datetime.fromtimestamp`
    rounds them (half to even), then truncated to milliseconds as isoformat does."""
    if ts is None:
        return None
    frac, whole = math.modf(ts)
    us = round(frac * 1e6)
    seconds = int(whole)
    if us >= 1_000_000:
        seconds += 1
        us -= 1_000_000
    elif us < 0:
        seconds -= 1
        us += 1_000_000
    day, second = divmod(seconds, 86_400)
    date = _DAYS.get(day)
    if date is None:
        date = _day(day)
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    # %-formatting: faster here than an f-string with the same widths.
    return "%sT%02d:%02d:%02d.%03dZ" % (date, hour, minute, second, us // 1000)  # noqa: UP031


_DAYS: dict[int, str] = {}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC).toordinal()


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
    sql = "SELECT e.*, w.root FROM episodes e LEFT JOIN workspaces w ON w.id = e.workspace_id"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY e.started_at DESC, e.id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    episodes = store.conn.execute(sql, params).fetchall()
    episode_ids = [e["id"] for e in episodes]
    proposals: dict[str, list[Any]] = defaultdict(list)
    proposal_ids: list[str] = []
    for chunk in _chunks(episode_ids):
        for p in store.conn.execute(
            f"SELECT * FROM proposals WHERE episode_id IN ({_in(chunk)}) ORDER BY id", chunk
        ):
            proposals[p["episode_id"]].append(p)
            proposal_ids.append(p["id"])
    hunks: dict[str, list[dict[str, Any]]] = defaultdict(list)
    checkpoints: dict[str, list[dict[str, Any]]] = defaultdict(list)
    # Plain tuples, not named rows: these are most of the rows an episode reads.
    cursor = store.conn.cursor()
    cursor.row_factory = None
    for chunk in _chunks(proposal_ids):
        for h in cursor.execute(
            f"""SELECT proposal_id, old_text, new_text, status FROM hunks
                WHERE proposal_id IN ({_in(chunk)}) ORDER BY idx""",
            chunk,
        ):
            hunks[h[0]].append({"old_text": h[1], "new_text": h[2], "status": h[3]})
        for c in cursor.execute(
            f"""SELECT proposal_id, window, due_at, observed_at, similarity, retention, outcome,
                via FROM checkpoints WHERE proposal_id IN ({_in(chunk)})
                ORDER BY window_seconds""",
            chunk,
        ):
            checkpoints[c[0]].append(
                {
                    "window": c[1],
                    "due_at": iso(c[2]),
                    "observed_at": iso(c[3]),
                    "similarity": c[4],
                    "retention": c[5],
                    "outcome": c[6],
                    "via": c[7],
                }
            )
    runs: dict[str, list[Any]] = defaultdict(list)
    run_ids: dict[str, None] = {}
    for chunk in _chunks(episode_ids):
        for r in store.conn.execute(
            f"""SELECT l.episode_id, l.link, t.* FROM episode_test_runs l JOIN test_runs t
                ON t.id = l.test_run_id WHERE l.episode_id IN ({_in(chunk)})
                ORDER BY t.started_at, t.id""",
            chunk,
        ):
            runs[r["episode_id"]].append(r)
            run_ids[r["id"]] = None
    failing: dict[str, list[FailingTest]] = defaultdict(list)
    for chunk in _chunks(list(run_ids)):
        for f in store.conn.execute(
            f"""SELECT test_run_id, test_id, file, classname FROM test_results
                WHERE test_run_id IN ({_in(chunk)}) AND outcome IN ('failed', 'error')
                ORDER BY test_run_id, idx""",
            chunk,
        ):
            failing[f[0]].append(FailingTest(f[1], f[2], f[3]))
    return [
        _episode(e, proposals[e["id"]], hunks, checkpoints, runs[e["id"]], failing)
        for e in episodes
    ]


def _episode(
    e: Any,
    proposals: list[Any],
    hunks: dict[str, list[dict[str, Any]]],
    checkpoints: dict[str, list[dict[str, Any]]],
    runs: list[Any],
    failing: dict[str, list[FailingTest]],
) -> dict[str, Any]:
    linked = [
        LinkedRun(r["id"], r["started_at"], _status(r), r["link"], tuple(failing[r["id"]]))
        for r in runs
    ]
    tests = summarize_tests(
        linked,
        edited_files={p["path"] for p in proposals if p["applied_at"] is not None},
        settled_at=e["settled_at"],
    )
    return {
        "schema": EPISODE_SCHEMA,
        "id": e["id"],
        "agent": e["agent"],
        "model": e["model"],
        "session_id": e["session_id"],
        "turn_id": e["turn_id"],
        "workspace": e["root"],
        "prompt": e["prompt"],
        "source": e["source"],
        "started_at": iso(e["started_at"]),
        "ended_at": iso(e["ended_at"]),
        "settled_at": iso(e["settled_at"]),
        "proposals": [_proposal(p, hunks[p["id"]], checkpoints[p["id"]]) for p in proposals],
        "test_runs": [_test_run(r, run.status) for r, run in zip(runs, linked, strict=True)],
        "tests": tests.as_json(iso),
    }


def _proposal(
    p: Any, hunks: list[dict[str, Any]], checkpoints: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": p["id"],
        "file": p["path"],
        "state": p["state"],
        "outcome": p["outcome"],
        "reason": p["reason"],
        "similarity": p["similarity"],
        "retention": p["retention"],
        "chars_added": p["chars_added"],
        "chars_removed": p["chars_removed"],
        "lines_added": p["lines_added"],
        "lines_removed": p["lines_removed"],
        "agent": p["agent"],
        "model": p["model"],
        "tool": p["tool"],
        "source": p["source"],
        "backfilled": bool(p["backfilled"]),
        "created_file": bool(p["created_file"]),
        "created_at": iso(p["created_at"]),
        "applied_at": iso(p["applied_at"]),
        "decided_by": p["decided_by"],
        "settled_at": iso(p["settled_at"]),
        "hunks": hunks,
        "checkpoints": checkpoints,
    }


def _json_list(text: str | None) -> Any:
    if not text:
        return []
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # what orjson refuses (a lone surrogate) the json module reads
        return json.loads(text)


def _status(r: Any) -> str:
    return run_status(
        exit_code=r["exit_code"],
        passed=r["passed"],
        failed=r["failed"],
        errors=r["errors"],
        skipped=r["skipped"],
        runner=r["runner"],
    )


def _test_run(r: Any, status: str) -> dict[str, Any]:
    return {
        "id": r["id"],
        "command": r["command"],
        "name": r["name"],
        "source": r["source"],
        "exit_code": r["exit_code"],
        "passed": r["passed"],
        "failed": r["failed"],
        "errors": r["errors"],
        "skipped": r["skipped"],
        "failing_ids": _json_list(r["failing_ids"]),
        "started_at": iso(r["started_at"]),
        "duration_s": r["duration_s"],
        "status": status,
        "link": r["link"],
        "runner": r["runner"],
        "results_from": r["results_from"],
        "report": r["report"],
        "cwd": r["cwd"],
    }
