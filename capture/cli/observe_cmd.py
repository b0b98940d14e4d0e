from __future__ import annotations

import argparse
from pathlib import Path

from capture.cli.context import Context
from capture.files import find_workspace, relative_to_workspace
from capture.recording.observer import observe_due


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", help="only these files (default: every due one)")


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    now = ctx.now()
    settled = checkpoints = 0
    if not args.paths:
        report = observe_due(ctx.store, ctx.config, now=now)
        settled, checkpoints = len(report.settled), report.checkpoints
    for given in args.paths:
        path = Path(given).resolve()
        root = find_workspace(path)
        relative = relative_to_workspace(path, root)
        if relative is None:
            continue
        report = observe_due(
            ctx.store, ctx.config, now=now, workspace_root=str(root), paths=[relative]
        )
        settled += len(report.settled)
        checkpoints += report.checkpoints
    # The raw event log keeps what is needed to replay recent history, not everything forever.
    ctx.store.prune_events(now - ctx.config.event_retention_days * 86400)
    print(f"{checkpoints} checkpoint(s) observed, {settled} proposal(s) settled")
    return 0
