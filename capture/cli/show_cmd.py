from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime

from capture.cli.context import Context
from capture.report.timeline import Entry, episode_timeline
from capture.store.episodes import load_episodes


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="episode id (or a unique prefix), or a proposal id")
    parser.add_argument("--json", action="store_true", help="print the episode JSON")
    parser.add_argument("--no-diff", action="store_true", help="leave the diffs out")


def _offset(at: datetime | None, start: datetime | None) -> str:
    if at is None or start is None:
        return "later"
    seconds = (at - start).total_seconds()
    if seconds < 60:
        return f"+{seconds:.1f}s" if seconds < 10 else f"+{seconds:.0f}s"
    if seconds < 3600:
        return f"+{int(seconds // 60)}m{int(seconds % 60):02d}s"
    if seconds < 86400:
        return f"+{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"
    return f"+{seconds / 86400:.1f}d"


_TONES = {"good": "green", "bad": "red", "neutral": ""}
_DIFF = {"+": "green", "-": "red", "@": "cyan"}


def _render(episode: dict, entries: list[Entry]) -> None:
    from rich.console import Console
    from rich.text import Text

    if os.environ.get("NO_COLOR"):
        console = Console(color_system=None, highlight=False, emoji=False)
    else:
        console = Console(highlight=False, emoji=False)
    head = Text(f"episode {episode['id']}", style="bold")
    head.append(f"  {episode['agent']}")
    if episode["model"]:
        head.append(f" ({episode['model']})")
    console.print(head)
    console.print(f"workspace {episode['workspace']}", highlight=False)
    console.print(f"started   {episode['started_at']}")
    if episode["settled_at"]:
        console.print(f"settled   {episode['settled_at']}")
    outcomes = [p["outcome"] for p in episode["proposals"]]
    if outcomes:
        summary = ", ".join(f"{outcomes.count(o)} {o}" for o in sorted(set(outcomes)))
        console.print(f"outcomes  {summary}")
    console.print()
    start = datetime.fromisoformat(episode["started_at"].replace("Z", "+00:00"))
    for e in entries:
        line = Text(f"{_offset(e.at, start):>9}  ", style="dim")
        if e.kind == "prompt":
            line.append("prompt  ", style="bold")
            line.append(e.title[:2000])
        else:
            line.append(e.title, style=_TONES[e.tone] + (" bold" if e.kind == "outcome" else ""))
        console.print(line, overflow="fold")
        for d in e.detail:
            console.print(Text("           " + d, style=_DIFF.get(d[:1], "")), overflow="fold")
    for summary_line in _tests_summary(episode.get("tests")):
        console.print(summary_line, highlight=False)


def _tests_summary(tests: dict | None) -> list[str]:
    """The episode's test evidence in a few lines: how its runs moved, and how far to trust it."""
    if not tests or not tests.get("runs"):
        return []
    first, last = tests["first_run_after"], tests["last_run_before_settling"]
    if first and last and first["id"] != last["id"]:
        verdict = f"{first['status']} -> {last['status']}"
    elif first:
        verdict = first["status"]
    else:
        verdict = "no run with a verdict"
    lines = ["", f"tests: {verdict}  ({tests['runs']} run(s))"]
    lines += [
        f"  failing in a file this episode edited: {test_id}"
        for test_id in tests["failing_tests_in_edited_files"]
    ]
    if tests["tests_edited_by_agent"]:
        lines.append("  the agent edited test files itself: weak evidence")
    return lines


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    episode_id = ctx.store.resolve_episode_id(args.id)
    (episode,) = load_episodes(ctx.store, ids=[episode_id])
    if args.json:
        json.dump(episode, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    _render(episode, episode_timeline(episode, diffs=not args.no_diff))
    return 0
