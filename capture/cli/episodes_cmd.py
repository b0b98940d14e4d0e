from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from capture.cli.context import Context
from capture.cli.when import parse_since
from capture.store.episodes import load_episodes


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the episode JSON (schema v1)")
    parser.add_argument("--since", help="only episodes active since (7d, 12h, 2026-11-30)")
    parser.add_argument("--limit", type=int, default=None, help="at most N episodes")
    parser.add_argument("--workspace", help="only this workspace root")


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    ctx.settle()
    since = parse_since(args.since, ctx.now()) if args.since else None
    episodes = load_episodes(ctx.store, since=since, limit=args.limit, workspace=args.workspace)
    if args.json:
        # Built into the episode contract's types and encoded from them (capture.episode).
        from capture.episode.codec import encode_episodes

        sys.stdout.flush()
        sys.stdout.buffer.write(encode_episodes(episodes))
        sys.stdout.buffer.flush()
        return 0
    from rich.console import Console
    from rich.table import Table

    from capture.store.ids import unique_prefixes

    # the shortest prefix no other episode shares (`capture show` takes it), never cut
    short = unique_prefixes([e["id"] for e in episodes], ctx.store.episode_ids())
    width = max((len(v) for v in short.values()), default=2)
    table = Table(title=f"{len(episodes)} episode(s)")
    table.add_column("id", no_wrap=True, min_width=width)
    for column in ("started", "agent", "model", "proposals", "outcomes", "tests"):
        table.add_column(column)
    for e in episodes:
        outcomes = Counter(p["outcome"] for p in e["proposals"])
        runs = e["test_runs"]
        table.add_row(
            short[e["id"]],
            (e["started_at"] or "")[:19].replace("T", " "),
            e["agent"],
            e["model"] or "",
            str(len(e["proposals"])),
            ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items())),
            _tests_cell(e["tests"]) if runs else "",
        )
    Console().print(table)
    return 0


def _tests_cell(tests: dict[str, Any]) -> str:
    first, last = tests["first_run_after"], tests["last_run_before_settling"]
    if first and last and first["id"] != last["id"]:
        cell = f"{first['status']} -> {last['status']}"
    elif first:
        cell = first["status"]
    else:
        cell = "no verdict"
    return cell + (" (agent edited tests)" if tests["tests_edited_by_agent"] else "")
