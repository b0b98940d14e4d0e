from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from capture.cli.context import Context
from capture.cli.when import parse_since
from capture.errors import InputError
from capture.files import find_workspace
from capture.report.figures import BY_CHOICES
from capture.report.periods import day_start, local_offset
from capture.report.queries import Scope, workspace_id_of

DEFAULT_SINCE = "7d"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Personal statistics over a period, compared with the period of the same length "
        "before it. Default: the last 7 days of the current workspace (all workspaces when "
        "nothing was recorded for this one), grouped by agent."
    )
    parser.add_argument("--since", help="start: 7d, 12h (before --until) or a date (2026-11-30)")
    parser.add_argument("--until", help="end: a date, an ISO time or 2d (ago); default: now")
    parser.add_argument("--today", action="store_true", help="since local midnight")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workspace", metavar="PATH", help="only this workspace root")
    where.add_argument("--all", action="store_true", help="every workspace")
    parser.add_argument(
        "--by", choices=BY_CHOICES, default="agent", help="group by (default: agent)"
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report JSON (report@1)")
    out.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    out.add_argument("--oneline", action="store_true", help="one short line, for status bars")


def _period(args: argparse.Namespace, now: float) -> tuple[float, float]:
    until = parse_since(args.until, now) if args.until else now
    if args.today:
        if args.since:
            raise InputError("give --today or --since, not both")
        return day_start(until, local_offset(until)), until
    since_text = args.since or DEFAULT_SINCE
    since = parse_since(since_text, until)  # durations count back from --until
    if since >= until:
        raise InputError("--since must be before --until")
    return since, until


def _workspace(args: argparse.Namespace, ctx: Context) -> tuple[str | None, int | None]:
    conn = ctx.store.conn
    if args.all:
        return None, None
    if args.workspace:
        root = str(Path(args.workspace).expanduser().resolve())
        found = workspace_id_of(conn, root)
        # Nothing recorded there (yet): every figure is zero rather than an error.
        return root, -1 if found is None else found
    root = str(find_workspace(Path.cwd()).resolve())
    found = workspace_id_of(conn, root)
    return (root, found) if found is not None else (None, None)


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    ctx.settle()
    now = ctx.now()
    since, until = _period(args, now)
    workspace, workspace_id = _workspace(args, ctx)
    scope = Scope(since, until, workspace_id, local_offset(until))
    from capture.report.assemble import make_report

    conn = ctx.store.conn
    by = None if args.oneline else args.by
    report = make_report(conn, scope, by, workspace=workspace)
    if args.oneline:
        from capture.report.today import oneline

        print(oneline(report))
        return 0
    from capture.report.tier_mix import fetch_tier_counts, tier_mix

    mix_rows, mix_total = tier_mix(fetch_tier_counts(conn, scope))
    from capture.report.evidence_mix import evidence_mix, fetch_evidence_counts

    evidence = evidence_mix(fetch_evidence_counts(conn, scope))
    if args.json:
        from capture.report.json_out import report_json
        from capture.report.tier_mix import tier_mix_json

        out = report_json(report)
        out["tiers"] = tier_mix_json(mix_rows, mix_total)
        from capture.report.evidence_mix import evidence_mix_json
        from capture.report.signals import fetch_signals, signals_json

        out.update(signals_json(fetch_signals(conn, since, until)))
        out["evidence"] = evidence_mix_json(evidence)
        json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if args.html:
        from capture.report.html import render_page

        timeline_by = "week" if until - since > 92 * 86400 else "day"
        timeline = (
            report
            if by == timeline_by
            else make_report(conn, scope, timeline_by, workspace=workspace)
        )
        agents = report if by == "agent" else make_report(conn, scope, "agent", workspace=workspace)
        path = Path(args.html)
        try:
            from capture.report.tier_mix import tier_mix_html

            page = render_page(
                report, timeline, agents, now=now, tiers=tier_mix_html(mix_rows, mix_total)
            )
            path.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc
        print(f"wrote {path}")
        return 0
    from capture.report.terminal import make_console, render
    from capture.report.tier_mix import render_tier_mix

    console = make_console()
    render(report, console)
    render_tier_mix(mix_rows, mix_total, console)
    from capture.report.evidence_mix import render_evidence_mix
    from capture.report.signals import fetch_signals, render_signals

    render_signals(fetch_signals(conn, since, until), console)
    render_evidence_mix(evidence, console)
    return 0
