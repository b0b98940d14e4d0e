"""`capture export`: the store's episodes as training data (see capture.export).

The level's projection is the sync anonymizer's, built here and handed to the library (the core
never imports `sync`). `full` is the episode as stored: for the user's own machine only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from capture.errors import InputError

__all__ = ["common_options", "configure", "plan_from", "progress", "run"]


def common_options(parser: argparse.ArgumentParser) -> None:
    """The options `capture export` and `capture collector export` share."""
    from capture.export.formats import FORMATS

    parser.add_argument(
        "--format",
        required=True,
        help=f"comma-separated, of: {', '.join(FORMATS)}",
    )
    parser.add_argument(
        "--out",
        "-o",
        default="capture-export",
        help="directory to write (default ./capture-export)",
    )
    parser.add_argument(
        "--tiers",
        help="only these tiers (comma-separated, e.g. gold,silver); an edit with no tier yet is "
        "left out by any --tiers",
    )
    parser.add_argument(
        "--evidence",
        help="only proposals whose label rests on these evidence kinds (comma-separated, of: "
        "buffer, disk-watched, disk-late, payload, import, git)",
    )
    parser.add_argument("--since", help="only episodes active since (7d, 12h, 2026-11-30)")
    parser.add_argument(
        "--split",
        help="train/eval by episode: the eval share (0.1, 10%%, 90/10); files NAME.train.jsonl "
        "and NAME.eval.jsonl",
    )
    parser.add_argument("--dedupe", action="store_true", help="write each distinct row once")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary")


def configure(parser: argparse.ArgumentParser) -> None:
    common_options(parser)
    parser.add_argument("--workspace", help="only this workspace root")
    from capture.episode.vocabulary import LEVELS

    parser.add_argument(
        "--level",
        choices=LEVELS,
        default="redacted",
        help="metrics: no code (episodes and agent-trace only); redacted (default): secrets "
        "replaced, identity scrubbed, directories hashed, as sync uploads; full: as stored, "
        "for this machine only",
    )


def plan_from(args: argparse.Namespace, level: str, extra: dict[str, Any]) -> Any:
    """The ExportPlan the shared options describe; InputError (exit 2) for a bad one."""
    from capture import __version__
    from capture.export.formats import parse_evidence, parse_formats, parse_tiers
    from capture.export.split import parse_split
    from capture.export.writer import ExportPlan

    try:
        formats = parse_formats(args.format)
        tiers = parse_tiers(args.tiers) if args.tiers is not None else None
        fraction = parse_split(args.split) if args.split is not None else None
        evidence = parse_evidence(args.evidence) if args.evidence is not None else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if level == "metrics":
        texts = [f.name for f in formats if f.needs_text]
        if texts:
            raise InputError(
                f"--format {texts[0]} needs code: the metrics level carries none "
                "(use --level redacted or full, or --format episodes,agent-trace)"
            )
    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {args.out}: not a directory")
    options = {
        "formats": ",".join(f.name for f in formats),
        "level": level,
        "tiers": ",".join(sorted(tiers)) if tiers is not None else "all",
        "evidence": ",".join(sorted(evidence)) if evidence is not None else "all",
        "since": args.since,
        "split": f"eval {fraction:g}" if fraction is not None else None,
        "dedupe": bool(args.dedupe),
        "capture_version": __version__,
        **extra,
    }
    return ExportPlan(
        formats=formats,
        out_dir=out,
        tiers=tiers,
        evidence=evidence,
        eval_fraction=fraction,
        dedupe=bool(args.dedupe),
        tool_version=__version__,
        options=options,
    )


@contextmanager
def progress(total: int | None, quiet: bool) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on stderr, when stderr is a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    with bar:
        task = bar.add_task("exporting", total=total)
        yield lambda n: bar.advance(task, n)


def summary(result: Any) -> str:
    rows = result.datasheet["rows"]
    parts = ", ".join(f"{n} {name}" for name, n in rows.items()) or "no rows"
    withheld = sum(result.datasheet["withheld_episodes"].values())
    note = f", {withheld} withheld" if withheld else ""
    return (
        f"capture export: {result.datasheet['episodes']} episode(s){note}: {parts}; "
        f"datasheet in {result.datasheet_path}"
    )


def _projector(ctx: Any, level: str) -> Any:
    if level == "full":
        return lambda episode: (episode, None)
    from sync.anonymize import Level, WorkspacePolicy
    from sync.service import anonymizer_for

    anonymizer = anonymizer_for(ctx.store, ctx.config)
    policy = WorkspacePolicy(Level(level))

    def project(episode: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        projection = anonymizer.project(episode, policy)
        if projection.quarantine:
            return None, "quarantined by the secret scan"
        if projection.episode is None:
            return None, "every file excluded"
        return projection.episode, None

    return project


def run(args: argparse.Namespace) -> int:
    from capture.cli.context import Context
    from capture.cli.when import parse_since
    from capture.export.selection import Selection, count_episodes, stream_episodes
    from capture.export.writer import run_export

    ctx = Context()
    ctx.settle()
    since = parse_since(args.since, ctx.now()) if args.since else None
    plan = plan_from(args, args.level, {"workspace": args.workspace})
    history = any(f.name == "episodes" for f in plan.formats)
    selection = Selection(since=since, workspace=args.workspace, history=history)
    project = _projector(ctx, args.level)
    total = count_episodes(ctx.store, selection)
    with progress(total, args.quiet) as advance:
        result = run_export(stream_episodes(ctx.store, selection), plan, project, advance=advance)
    if not args.quiet:
        print(summary(result), file=sys.stderr)
    return 0
