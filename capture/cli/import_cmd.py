"""`capture import claude-code|codex [PATH]` and `capture import aider [RANGE]`: backfill."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from capture.cli.context import Context
from capture.errors import InputError

__all__ = ["configure", "default_root", "run", "transcripts"]

SOURCES = ("claude-code", "codex", "aider")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", choices=SOURCES, help="whose history to import")
    parser.add_argument(
        "target",
        nargs="?",
        help="claude-code/codex: a transcript file or a folder of them (default: the agent's "
        "own, ~/.claude/projects or ~/.codex/sessions); aider: a git revision range of the "
        "current work tree (default: all of HEAD's history)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")


def default_root(source: str, env: dict[str, str] | None = None) -> list[Path]:
    env = dict(os.environ) if env is None else env
    if source == "claude-code":
        base = env.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
        return [Path(base) / "projects"]
    home = Path(env.get("CODEX_HOME") or os.path.expanduser("~/.codex"))
    return [home / "sessions", home / "archived_sessions"]


def transcripts(roots: list[Path]) -> list[Path]:
    """Every *.jsonl under the roots (a root may be a file), oldest first."""
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            found.extend(p for p in root.rglob("*.jsonl") if p.is_file())
    return sorted(found, key=lambda p: (p.stat().st_mtime, str(p)))


def _progress(total: int, quiet: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    """(advance, close) of a progress bar on stderr when it is a terminal."""
    if quiet or total == 0 or not sys.stderr.isatty():
        return (lambda: None), (lambda: None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=True,
    )
    bar.start()
    task = bar.add_task("importing", total=total)
    return (lambda: bar.advance(task)), bar.stop


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    if args.source == "aider":
        from capture.importers.aider import import_range

        stats = import_range(ctx.store, ctx.config, Path.cwd(), args.target, now=ctx.now())
        if not args.quiet:
            print(stats.summary())
        return 0
    roots = [Path(args.target).expanduser()] if args.target else default_root(args.source)
    if args.target and not roots[0].exists():
        raise InputError(f"{args.target}: no such file or directory")
    files = transcripts(roots)
    from capture.importers.backfill import Reader, import_files

    reader: Reader
    if args.source == "claude-code":
        from capture.importers.claude_transcript import read_transcript

        reader = read_transcript
    else:
        from capture.importers.codex_rollout import read_rollout

        reader = read_rollout

    advance, close = _progress(len(files), args.quiet)
    try:
        stats = import_files(
            ctx.store, ctx.config, args.source, reader, _each(files), now=ctx.now(), advance=advance
        )
    finally:
        close()
    if not args.quiet:
        print(stats.summary())
    return 0


def _each(files: list[Path]) -> Iterator[Path]:
    yield from files
