"""`capture import claude-code|codex [PATH]`, `capture import aider [RANGE]`: backfill; and
`capture import hooks DIR [--agent NAME]`: hook payload logs replayed through `capture hook`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from capture.cli.context import Context
from capture.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capture.store.database import Store

__all__ = ["configure", "default_root", "run", "transcripts"]

SOURCES = ("claude-code", "codex", "aider", "hooks")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", choices=SOURCES, help="whose history to import")
    parser.add_argument(
        "target",
        nargs="?",
        help="claude-code/codex: a transcript file or a folder of them (default: the agent's "
        "own, ~/.claude/projects or ~/.codex/sessions); aider: a git revision range of the "
        "current work tree (default: all of HEAD's history); hooks: a payload log or a folder "
        "of them (JSON arrays, single payloads or JSON lines), fed in order through "
        "`capture hook`",
    )
    parser.add_argument(
        "--agent",
        default="claude-code",
        help="hooks: whose payloads the logs hold (default: claude-code)",
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
    if args.source == "hooks":
        return _replay(ctx, args)
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


def hook_logs(target: Path) -> list[Path]:
    """The payload logs of a file or folder, in name order (a log names its own order)."""
    from capture.importers.hook_logs import LOG_SUFFIXES

    if target.is_file():
        return [target]
    return sorted(
        (p for p in target.rglob("*") if p.is_file() and p.name.endswith(LOG_SUFFIXES)),
        key=lambda p: str(p.relative_to(target)),
    )


def _replay(ctx: Context, args: argparse.Namespace) -> int:
    """Feed each payload of the logs to `capture hook AGENT` (the real process, in order), then
    apply the queue; logs replayed before and unchanged since are skipped."""
    import os
    import subprocess
    import time

    from capture.cli.hook_cmd import drain_queue
    from capture.hooks.agents import AGENTS
    from capture.hooks.ingest import REPLAY_ENV, close_unanswered
    from capture.importers.hook_logs import payloads_in
    from capture.store.import_rows import imported_files, mark_imported

    if args.agent not in AGENTS:
        raise InputError(f"unknown agent {args.agent!r} (known: {', '.join(AGENTS)})")
    if not args.target:
        raise InputError("capture import hooks needs a payload log or a folder of them")
    target = Path(args.target).expanduser()
    if not target.exists():
        raise InputError(f"{args.target}: no such file or directory")
    store = ctx.store
    seen = imported_files(store.conn, "hooks")
    files = fed = bad = skipped = unanswered = 0
    # a replayed log is not a live stream: its pre-events may have lost their post-events
    env = {**os.environ, REPLAY_ENV: "1"}
    for log in hook_logs(target):
        info = log.stat()
        name = str(log.resolve())
        if seen.get(name) == (info.st_size, info.st_mtime_ns):
            skipped += 1
            continue
        payloads, unreadable = payloads_in(log.name, log.read_text("utf-8", "surrogateescape"))
        bad += unreadable
        began = time.time()
        for payload in payloads:
            subprocess.run(
                [sys.executable, "-m", "capture", "hook", args.agent],
                input=payload.encode("utf-8", "surrogateescape"),
                stdout=subprocess.DEVNULL,
                check=False,
                env=env,
            )
            fed += 1
        drain_queue()
        _wait_for_queue(store)
        unanswered += close_unanswered(store, ctx.config, args.agent, began)
        with store.transaction():
            mark_imported(
                store.conn,
                "hooks",
                name,
                size=info.st_size,
                mtime_ns=info.st_mtime_ns,
                now=ctx.now(),
                proposals=len(payloads),
            )
        files += 1
    if not args.quiet:
        print(
            f"{files} log(s) replayed, {skipped} unchanged since the last replay; {fed} "
            f"payload(s) fed to `capture hook {args.agent}`, {bad} unreadable entry(ies), "
            f"{unanswered} announced edit(s) with no post-event (lost: no-post-event) "
            "(what a payload could not record is in hooks.log)"
        )
    return 0


def _wait_for_queue(store: Store, timeout: float = 60.0) -> None:
    """Until the detached hook children have applied what they queued."""
    import time

    from capture.store.inbox_rows import queued_count

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if queued_count(store.conn) == 0:
            return
        time.sleep(0.02)
