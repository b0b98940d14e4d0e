"""The episode JSON: what `capture episodes --json` prints, and what exports and uploads carry.

The schema is versioned (`schema`); fields are only ever added within a version. The README's
"Episode schema" section documents every field.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from capture.linking import FailingTest, LinkedRun, run_status, summarize_tests
from capture.store import Store

__all__ = ["EPISODE_SCHEMA", "iso", "load_episodes"]

EPISODE_SCHEMA = "agent-capture/episode@1"


def iso(ts: float | None) -> str | None:
    """`2026-05-28T20:26:40.123Z`: what `isoformat(timespec="milliseconds")` writes for UTC, with
    `Z`; formatted by hand, at half its cost (an episode carries tens of times)."""
    if ts is None:
        return None
    d = datetime.fromtimestamp(ts, UTC)
    # %-formatting: 1.6 us here, an f-string with the same widths 2.7 us.
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (  # noqa: UP031
        d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond // 1000
    )  # fmt: skip


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
    hunks: dict[str, list[Any]] = defaultdict(list)
    checkpoints: dict[str, list[Any]] = defaultdict(list)
    for chunk in _chunks(proposal_ids):
        for h in store.conn.execute(
            f"SELECT * FROM hunks WHERE proposal_id IN ({_in(chunk)}) ORDER BY idx", chunk
        ):
            hunks[h["proposal_id"]].append(h)
        for c in store.conn.execute(
            f"""SELECT * FROM checkpoints WHERE proposal_id IN ({_in(chunk)})
                ORDER BY window_seconds""",
            chunk,
        ):
            checkpoints[c["proposal_id"]].append(c)
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
    hunks: dict[str, list[Any]],
    checkpoints: dict[str, list[Any]],
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


def _proposal(p: Any, hunks: list[Any], checkpoints: list[Any]) -> dict[str, Any]:
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
        "hunks": [
            {"old_text": h["old_text"], "new_text": h["new_text"], "status": h["status"]}
            for h in hunks
        ],
        "checkpoints": [
            {
                "window": c["window"],
                "due_at": iso(c["due_at"]),
                "observed_at": iso(c["observed_at"]),
                "similarity": c["similarity"],
                "retention": c["retention"],
                "outcome": c["outcome"],
                "via": c["via"],
            }
            for c in checkpoints
        ],
    }


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
        "failing_ids": json.loads(r["failing_ids"] or "[]"),
        "started_at": iso(r["started_at"]),
        "duration_s": r["duration_s"],
        "status": status,
        "link": r["link"],
        "runner": r["runner"],
        "results_from": r["results_from"],
        "report": r["report"],
        "cwd": r["cwd"],
    }
