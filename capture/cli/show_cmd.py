from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime

from capture.cli.context import Context
from capture.report.timeline import Entry, episode_timeline
from capture.report.trajectory_text import task_line, trajectory_lines
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
    task = task_line(episode)
    if task:
        console.print(task, highlight=False, markup=False)
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
    for tier_line in _tiers_summary(episode):
        console.print(tier_line, highlight=False)
    for step_line in trajectory_lines(episode.get("trajectory")):
        console.print(step_line, highlight=False, markup=False, overflow="fold")


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def _late_lines(late: dict | None) -> list[str]:
    """A proposal's late signals in a few lines."""
    if late is None:
        return ["    late signals: not measured yet (capture observe --late)"]
    if late["commit"] is None:
        gone = ", the file was deleted" if late["file_gone"] else ""
        return [f"    not committed (of {late['lines']} line(s) looked for){gone}"]
    lines = [
        f"    committed {late['committed_lines']}/{late['lines']} line(s) in "
        f"{late['commit'][:10]} ({late['committed_at'][:10]}); churn 14d "
        f"{_pct(late['churn_14d'])}, 30d {_pct(late['churn_30d'])}, "
        f"watched {late['days_observed']:.1f} day(s)"
    ]
    if late["reverted_by"]:
        lines.append(
            f"    reverted by {late['reverted_by'][:10]} ({late['revert_kind']}) on "
            f"{(late['reverted_at'] or '')[:10]}"
        )
    if late["fixed_by"]:
        lines.append(f"    fixed by {late['fixed_by'][:10]} on {(late['fixed_at'] or '')[:10]}")
    syntax = late["syntax_errors_added"]
    lines.append(
        f"    at commit: {'no grammar for' if syntax is None else syntax} syntax error(s) added, "
        f"{late['markers_added']} TODO/FIXME/HACK marker(s) added"
    )
    return lines


def _tiers_summary(episode: dict) -> list[str]:
    """The episode's tier and each proposal's, with their reasons and late signals."""
    lines = [""]
    tier = episode.get("tier")
    lines.append(
        "tier " + (f"{tier['tier']}: {'; '.join(tier['reasons'])}" if tier else "not decided yet")
    )
    for p in episode["proposals"]:
        ptier = p.get("tier")
        verdict = f"tier {ptier['tier']}: {'; '.join(ptier['reasons'])}" if ptier else "no tier yet"
        lines.append(f"  {p['file']} ({p['id'][:12]}): {verdict}")
        lines.append(_evidence_line(p))
        if p["state"] == "applied" and p["outcome"] in ("kept", "edited"):
            lines += _late_lines(p.get("late_signals"))
    return lines


def _evidence_line(p: dict) -> str:
    """What the proposal's outcome rests on and who made the change behind it."""
    reason = f" ({p['reason']})" if p.get("reason") else ""
    kind = p.get("evidence") or "not recorded"
    seen = {True: "seen", False: "inferred", None: ""}[p.get("evidence_seen")]
    by = p.get("author") or "unknown"
    undone = f", {p['undone_by']}" if p.get("undone_by") else ""
    return (
        f"    outcome {p['outcome']}{reason}; evidence {kind}"
        f"{f' ({seen})' if seen else ''}; change by {by}{undone}"
    )


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
    ctx.settle()
    episode_id = ctx.store.resolve_episode_id(args.id)
    (episode,) = load_episodes(ctx.store, ids=[episode_id])
    decisions = _decisions(ctx, episode)
    follow_up = _follow_up(ctx, episode["id"])
    if args.json:
        # beside the episode as `episodes --json` gives it, and only when there are any: the
        # explicit decisions and the follow-up (their own tables, not the episode contract)
        extra: dict = {}
        if decisions:
            extra["decisions"] = decisions
        if follow_up is not None:
            extra["follow_up"] = follow_up
        json.dump({**episode, **extra}, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    _render(episode, episode_timeline(episode, diffs=not args.no_diff))
    for line in _decisions_summary(episode, decisions):
        print(line)
    if follow_up is not None:
        print(f"\nfollow-up: {follow_up['label']} (rule {follow_up['rule']})")
    return 0


def _follow_up(ctx: Context, episode_id: str) -> dict | None:
    """How the user's next prompt after this episode read, when one came."""
    from capture.store.followup_rows import followups_of

    row = followups_of(ctx.store.conn, [episode_id]).get(episode_id)
    if row is None:
        return None
    return {
        "label": row.label,
        "rule": row.rule,
        "rules_version": row.rules_version,
        "next_episode": row.next_episode_id,
    }


def _decisions(ctx: Context, episode: dict) -> list[dict]:
    """The explicit decisions the agents' telemetry reported on this episode's proposals."""
    from capture.store.decision_rows import decisions_of_proposals

    by_proposal = decisions_of_proposals(ctx.store.conn, [p["id"] for p in episode["proposals"]])
    return [
        {
            "proposal": proposal_id,
            "decision": row.decision,
            "source": row.source,
            "explicit": row.explicit,
            "origin": row.origin,
            "tool": row.tool,
            "at": row.at,
        }
        for proposal_id, rows in by_proposal.items()
        for row in rows
    ]


def _decisions_summary(episode: dict, decisions: list[dict]) -> list[str]:
    """Who decided each proposal: an explicit decision from the agent's telemetry, or what
    was inferred from its hooks."""
    if not episode["proposals"]:
        return []
    lines = ["", "decisions"]
    by_proposal: dict[str, list[dict]] = {}
    for d in decisions:
        by_proposal.setdefault(d["proposal"], []).append(d)
    for p in episode["proposals"]:
        mine = by_proposal.get(p["id"], [])
        if mine:
            d = mine[-1]
            who = "a person" if d["explicit"] else "not a person"
            verdict = f"{d['decision']} by {d['source'] or 'unknown'} ({who}; {d['origin']})"
        else:
            verdict = f"{p['state']} (inferred" + (
                f" by {p['decided_by']})" if p.get("decided_by") else ")"
            )
        lines.append(f"  {p['file']} ({p['id'][:12]}): {verdict}")
    return lines
