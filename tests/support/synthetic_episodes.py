"""Episodes made up for sync tests and benchmarks: episode@1 dicts, and the same written straight
into a capture store (much faster than recording thousands through the CLI).

The text is varied (random identifiers, numbers, prose) so that no cache makes a run look faster
than real use would be.
"""

from __future__ import annotations

import json
import random
from typing import Any

from capture.store.database import Store
from capture.store.episodes import EPISODE_SCHEMA, iso

__all__ = ["make_episode", "write_episodes"]

_WORDS = [
    "total",
    "items",
    "value",
    "result",
    "count",
    "index",
    "buffer",
    "parser",
    "token_count",
    "node",
    "child",
    "parent",
    "config",
    "request",
    "response",
    "handler",
    "session",
    "user_id",
    "amount",
    "price",
    "order",
    "cart",
    "invoice",
    "report",
    "row",
    "column",
    "table",
    "query",
    "cursor",
    "record",
    "event",
    "payload",
    "message",
    "queue",
    "worker",
    "task",
    "job",
    "retry",
    "timeout",
    "limit",
    "offset",
    "page",
    "size",
    "width",
    "height",
    "color",
    "style",
    "render",
    "update",
    "delete",
    "create",
    "fetch",
    "load",
    "save",
]
_PROSE = (
    "fix the failing test in the parser so that empty input is accepted",
    "add pagination to the orders endpoint and keep the old behaviour as default",
    "refactor the retry loop; it should back off exponentially",
    "why does the cart total ignore discounts? make it include them",
    "rename the helper and update its callers",
    "write a unit test for the invoice rounding",
    "the report is slow for big tables, cache the column widths",
)
_DIRS = ("src", "app", "lib", "billing", "orders", "core", "tests", "api", "internal", "web")
_EXT = (".py", ".ts", ".go", ".rs", ".js", ".java")


def _ident(rng: random.Random) -> str:
    return "_".join(rng.sample(_WORDS, rng.randint(1, 2)))


def _code_line(rng: random.Random) -> str:
    kind = rng.random()
    a, b = _ident(rng), _ident(rng)
    indent = "    " * rng.randint(0, 2)
    if kind < 0.01:
        # 1 line in 100 goes to detect-secrets: a quoted digest or id, or a secret key word.
        return indent + rng.choice(
            [
                f'{a} = "{rng.getrandbits(160):040x}"',
                f'request_id = "{rng.getrandbits(128):032x}"',
                f'api_key = os.environ["{a.upper()}_API_KEY"]',
                f'password_field = form.get("password_{b}")',
                f'secret_name = "{a}-{rng.randint(0, 99)}"',
            ]
        )
    if kind < 0.25:
        return f"{indent}{a} = {b}({_ident(rng)}, {rng.randint(0, 999)})"
    if kind < 0.45:
        return f"{indent}if {a} > {rng.randint(0, 99)}:"
    if kind < 0.6:
        return f"{indent}return {a} + {b}"
    if kind < 0.72:
        return f'{indent}log.info("{rng.choice(_PROSE)[:30]}", {a})'
    if kind < 0.85:
        return f"{indent}for {a} in {b}:"
    if kind < 0.93:
        return f"{indent}# {rng.choice(_PROSE)}"
    return f"def {a}({b}, {_ident(rng)}={rng.randint(0, 9)}):"


def _block(rng: random.Random, lines: int) -> str:
    return "\n".join(_code_line(rng) for _ in range(lines)) + "\n"


def make_episode(
    rng: random.Random, n: int, *, root: str = "/home/dev/work/shop"
) -> dict[str, Any]:
    """One settled episode as `capture episodes --json` prints it."""
    # every corpus's times lie in the past (from 2026-05-28, a minute apart, wrapping after
    # 200,000): the collector refuses an episode from the future
    t0 = 1_780_000_000.0 + (n % 200_000) * 60
    eid = f"{int(t0 * 1000):011x}{n % 0xFFFFF:05x}"
    proposals = []
    for k in range(rng.randint(1, 3)):
        ext = rng.choice(_EXT)
        path = "/".join(rng.sample(_DIRS, rng.randint(1, 3))) + f"/{_ident(rng)}{ext}"
        hunks = [
            {
                "old_text": _block(rng, rng.randint(1, 6)),
                "new_text": _block(rng, rng.randint(2, 12)),
                "status": "tracking",
            }
            for _ in range(rng.randint(1, 2))
        ]
        applied = t0 + k
        proposals.append(
            {
                "id": f"{eid[:11]}{k:05x}",
                "file": path,
                "state": "applied",
                "outcome": rng.choice(("kept", "kept", "edited", "undone")),
                "reason": "similarity 0.97 >= 0.9",
                "similarity": round(rng.random(), 3),
                "retention": round(rng.random(), 3),
                "chars_added": rng.randint(10, 900),
                "chars_removed": rng.randint(0, 300),
                "lines_added": rng.randint(1, 30),
                "lines_removed": rng.randint(0, 10),
                "agent": "claude-code",
                "model": "opus",
                "tool": "Edit",
                "source": "hook",
                "backfilled": False,
                "created_file": False,
                "created_at": iso(applied),
                "applied_at": iso(applied),
                "decided_by": None,
                "settled_at": iso(applied + 600),
                "hunks": hunks,
                "checkpoints": [
                    {
                        "window": w,
                        "due_at": iso(applied + s),
                        "observed_at": iso(applied + s + 0.2),
                        "similarity": 0.97,
                        "retention": 1.0,
                        "outcome": "kept",
                        "via": "disk",
                    }
                    for w, s in (("30s", 30), ("2m", 120), ("10m", 600))
                ],
            }
        )
    runs = []
    for k in range(rng.randint(0, 2)):
        failed = rng.randint(0, 2)
        runs.append(
            {
                "id": f"{eid[:11]}{k + 8:05x}",
                "command": f"pytest tests/test_{_ident(rng)}.py -q",
                "name": None,
                "source": "wrapper",
                "exit_code": 1 if failed else 0,
                "passed": rng.randint(1, 80),
                "failed": failed,
                "errors": 0,
                "skipped": 0,
                "failing_ids": [
                    f"tests/test_{_ident(rng)}.py::test_{_ident(rng)}" for _ in range(failed)
                ],
                "started_at": iso(t0 + 30),
                "duration_s": round(rng.random() * 5, 2),
            }
        )
    return {
        "schema": EPISODE_SCHEMA,
        "id": eid,
        "agent": "claude-code",
        "model": "opus",
        "session_id": f"sess-{n // 7}",
        "turn_id": f"turn-{n}",
        "workspace": root,
        "prompt": rng.choice(_PROSE) + f" (see {root}/src/{_ident(rng)}.py)",
        "source": "hook",
        "started_at": iso(t0),
        "ended_at": iso(t0 + 5),
        "settled_at": iso(t0 + 600),
        "proposals": proposals,
        "test_runs": runs,
    }


def write_episodes(store: Store, episodes: list[dict[str, Any]], *, now: float) -> None:
    """Insert episode@1 dicts into the store's domain tables, settled, in one transaction."""

    def ts(value: str | None) -> float | None:
        if value is None:
            return None
        from datetime import datetime

        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()

    with store.transaction():
        roots: dict[str, int] = {}
        for e in episodes:
            root = e["workspace"]
            if root not in roots:
                roots[root] = store.ensure_workspace(root, now)
            ws = roots[root]
            store.conn.execute(
                """INSERT INTO episodes (id, workspace_id, agent, model, session_id, turn_id, key,
                   prompt, source, started_at, last_at, ended_at, settled_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    e["id"], ws, e["agent"], e["model"], e["session_id"], e["turn_id"],
                    f"{e['agent']}\x1f{e['session_id']}\x1f{e['turn_id']}", e["prompt"],
                    e["source"], ts(e["started_at"]), ts(e["started_at"]), ts(e["ended_at"]),
                    ts(e["settled_at"]),
                ),
            )  # fmt: skip
            for p in e["proposals"]:
                store.conn.execute(
                    """INSERT INTO proposals (id, episode_id, workspace_id, path, agent, model,
                       tool, state, outcome, reason, similarity, retention, chars_added,
                       chars_removed, lines_added, lines_removed, created_file, backfilled,
                       source, created_at, applied_at, decided_by, settled_at)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                       ?)""",
                    (
                        p["id"], e["id"], ws, p["file"], p["agent"], p["model"], p["tool"],
                        p["state"], p["outcome"], p["reason"], p["similarity"], p["retention"],
                        p["chars_added"], p["chars_removed"], p["lines_added"],
                        p["lines_removed"], int(p["created_file"]), int(p["backfilled"]),
                        p["source"], ts(p["created_at"]), ts(p["applied_at"]), p["decided_by"],
                        ts(p["settled_at"]),
                    ),
                )  # fmt: skip
                store.conn.executemany(
                    """INSERT INTO hunks (proposal_id, idx, old_text, new_text, status)
                       VALUES (?, ?, ?, ?, ?)""",
                    [
                        (p["id"], i, h["old_text"], h["new_text"], h["status"])
                        for i, h in enumerate(p["hunks"])
                    ],
                )
                store.conn.executemany(
                    """INSERT INTO checkpoints (proposal_id, window, window_seconds, due_at,
                       observed_at, similarity, retention, outcome, via)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    [
                        (
                            p["id"], c["window"], i, ts(c["due_at"]), ts(c["observed_at"]),
                            c["similarity"], c["retention"], c["outcome"], c["via"],
                        )
                        for i, c in enumerate(p["checkpoints"])
                    ],
                )  # fmt: skip
            for r in e["test_runs"]:
                store.conn.execute(
                    """INSERT INTO test_runs (id, workspace_id, command, name, source, started_at,
                       duration_s, exit_code, passed, failed, errors, skipped, failing_ids)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        r["id"], ws, r["command"], r["name"], r["source"], ts(r["started_at"]),
                        r["duration_s"], r["exit_code"], r["passed"], r["failed"], r["errors"],
                        r["skipped"], json.dumps(r["failing_ids"]),
                    ),
                )  # fmt: skip
                store.conn.execute(
                    "INSERT INTO episode_test_runs (episode_id, test_run_id) VALUES (?, ?)",
                    (e["id"], r["id"]),
                )
