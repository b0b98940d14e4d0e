"""`capture observe`: due checkpoints against the files on disk; with `--late`, the late pass over
git too (what a post-commit hook and a cron-less catch-up run); tiers recomputed after both."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path

from capture.cli.context import Context
from capture.errors import InputError
from capture.files import find_workspace, relative_to_workspace
from capture.recording.observer import observe_due


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", help="only these files (default: every due one)")
    parser.add_argument(
        "--late",
        action="store_true",
        help="also follow kept edits through git: commit, churn, reverts, fixes, syntax",
    )
    parser.add_argument(
        "--repo",
        metavar="DIR",
        help="with --late: only the workspaces in this folder (the post-commit hook's)",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing")


def late_now(default: float) -> float:
    """The time a late pass measures at: CAPTURE_NOW (epoch seconds or an ISO date) when set,
    which lets a script or a test stand weeks after its commits, else the clock."""
    text = os.environ.get("CAPTURE_NOW", "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"CAPTURE_NOW: not epoch seconds or an ISO date: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    now = ctx.now()
    if args.repo and not args.late:
        raise InputError("--repo goes with --late")
    late_at = late_now(now) if args.late else now
    settled: list[str] = []
    checkpoints = 0
    if not args.paths:
        report = observe_due(ctx.store, ctx.config, now=now)
        settled, checkpoints = list(report.settled), report.checkpoints
    for given in args.paths:
        path = Path(given).resolve()
        root = find_workspace(path)
        relative = relative_to_workspace(path, root)
        if relative is None:
            continue
        report = observe_due(
            ctx.store, ctx.config, now=now, workspace_root=str(root), paths=[relative]
        )
        settled += report.settled
        checkpoints += report.checkpoints
    # The raw event log keeps what is needed to replay recent history, not everything forever.
    ctx.store.prune_events(now - ctx.config.event_retention_days * 86400)
    # the trajectory is kept as long as the events log, by the same setting
    ctx.store.prune_steps(now - ctx.config.event_retention_days * 86400)
    from capture.recording.late_tiers import episodes_of, recompute_tiers, untiered_episodes

    # observe_due keeps the tiers its settling decided; what is left: the late pass's, and
    # settled episodes with no tier yet.
    touched: list[str] = []
    lines = [f"{checkpoints} checkpoint(s) observed, {len(settled)} proposal(s) settled"]
    if args.late:
        from capture.recording.late_git import late_pass

        under = str(Path(args.repo).resolve()) if args.repo else None
        late = late_pass(ctx.store, now=late_at, under=under)
        touched += late.measured
        lines.append(
            f"late signals: {late.proposals} proposal(s) in {late.repositories} "
            f"repositor{'y' if late.repositories == 1 else 'ies'}, {late.committed} committed"
        )
        lines += [f"  skipped {why}" for why in late.skipped]
    episodes = dict.fromkeys([*episodes_of(ctx.store, touched), *untiered_episodes(ctx.store)])
    tiers = recompute_tiers(ctx.store, list(episodes), now=late_at)
    if tiers.changed:
        lines.append(f"{tiers.changed} tier(s) changed")
    if not args.quiet:
        print("\n".join(lines))
    return 0
