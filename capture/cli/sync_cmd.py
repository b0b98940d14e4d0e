"""`capture sync`: opt-in upload of anonymized episodes to a team collector.

Nothing here runs unless asked: the sync package is imported inside `run`, and nothing is sent
before `capture sync enable` and then `capture sync now` (or a running `capture serve`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from capture.cli.context import Context
from capture.episode.vocabulary import LEVELS
from capture.errors import CaptureError, InputError, NotFoundError
from capture.files import find_workspace


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sync_command", metavar="ACTION", required=True)

    enable = sub.add_parser("enable", help="opt a workspace (or all) in to uploads")
    enable.add_argument("--url", help="the collector's base URL (https://...)")
    enable.add_argument("--token", help="an ingest token from the collector's admin")
    enable.add_argument("--level", choices=LEVELS, help="what may leave (default: redacted)")
    where = enable.add_mutually_exclusive_group()
    where.add_argument("--workspace", help="workspace root (default: the current git work tree)")
    where.add_argument("--all", action="store_true", help="every workspace")
    enable.add_argument(
        "--include", action="append", metavar="GLOB", help="only files matching (repeatable)"
    )
    enable.add_argument(
        "--exclude", action="append", metavar="GLOB", help="never files matching (repeatable)"
    )

    disable = sub.add_parser(
        "disable", help="stop uploading: everything (the default, or --all), or one workspace"
    )
    which = disable.add_mutually_exclusive_group()
    which.add_argument("--workspace", help="take this workspace out (it stays out under --all too)")
    which.add_argument(
        "--all", action="store_true", help="turn sync off and remove every opt-in (the default)"
    )

    status = sub.add_parser("status", help="queued, sent, set aside, quarantined, last error")
    status.add_argument("--json", action="store_true")

    preview = sub.add_parser("preview", help="exactly what would be sent")
    preview.add_argument("episode", nargs="?", help="one episode id (or a unique prefix)")
    preview.add_argument("--json", action="store_true", help="the request body, byte for byte")
    preview.add_argument("--level", choices=LEVELS, help="with sync off: the level to show")
    preview.add_argument("--limit", type=int, default=None, help="at most N episodes")

    now = sub.add_parser("now", help="upload now, with a progress bar")
    now.add_argument(
        "--timeout", type=float, default=600.0, help="give up after SECONDS (default 600)"
    )
    now.add_argument("--quiet", action="store_true", help="no progress bar")

    sub.add_parser("retry", help="queue the set-aside episodes again")


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    action = args.sync_command
    handler = {
        "enable": _enable,
        "disable": _disable,
        "status": _status,
        "preview": _preview,
        "now": _now,
        "retry": _retry,
    }[action]
    return int(handler(ctx, args))


def _root(path: str | None) -> str:
    if path is None:
        return str(find_workspace(Path.cwd()).resolve())
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InputError(f"not a directory: {path}")
    return str(p.resolve())


def _enable(ctx: Context, args: argparse.Namespace) -> int:
    from sync.settings import ALL, enable

    root = ALL if args.all else _root(args.workspace)
    with ctx.store.transaction():
        settings = enable(
            ctx.store.conn,
            now=ctx.now(),
            root=root,
            url=args.url,
            token=args.token,
            level=args.level,
            include=args.include,
            exclude=args.exclude,
        )
    opt_in = settings.opt_in_for(root)
    assert opt_in is not None
    where = "every workspace" if root == ALL else root
    print(f"sync enabled for {where} at level {opt_in.level.value} -> {settings.url}")
    if opt_in.include:
        print(f"  only files matching: {', '.join(opt_in.include)}")
    if opt_in.exclude:
        print(f"  never files matching: {', '.join(opt_in.exclude)}")
    if root == ALL and settings.opted_out:
        print(f"  still out (taken out by name): {', '.join(settings.opted_out)}")
    print("nothing has been sent: `capture sync preview` shows what would go, `capture sync now`")
    print("sends it (a running `capture serve` sends in the background from its next start)")
    return 0


def _disable(ctx: Context, args: argparse.Namespace) -> int:
    from sync.settings import disable

    root = None if args.all or not args.workspace else _root(args.workspace)
    with ctx.store.transaction():
        done = disable(ctx.store.conn, now=ctx.now(), root=root)
    if root is None:
        if done.was_in:
            print(
                f"sync disabled; every opt-in removed, {done.dropped} queued episode(s) "
                "dropped, nothing more will be sent"
            )
        else:
            print("sync was not on; it stays off and nothing is sent")
        return 0
    if done.was_in:
        print(f"sync disabled for {root}; {done.dropped} queued episode(s) dropped")
    else:
        print(f"{root} was not opted in; nothing of it is sent")
    print(f"  it stays out, also under --all, until `capture sync enable --workspace {root}`")
    return 0


def _when(ts: float | None) -> str:
    if ts is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _status(ctx: Context, args: argparse.Namespace) -> int:
    from sync.outbox import Outbox, RowState
    from sync.settings import ALL, load_settings, workspace_states
    from sync.store.episode_rows import workspace_roots

    settings = load_settings(ctx.store.conn)
    outbox = Outbox(ctx.store.conn)
    counts = outbox.counts()
    known = workspace_roots(ctx.store.conn)
    states = workspace_states(settings, known)
    report: dict[str, Any] = {
        "enabled": settings.enabled,
        "url": settings.url,
        "all": settings.enabled and settings.all_workspaces,
        "in": [{"root": w.root, "why": w.why, "level": w.level} for w in states if w.included],
        "out": [{"root": w.root, "why": w.why} for w in states if not w.included],
        "opted_out": list(settings.opted_out),
        "workspaces": [
            {
                "root": o.root,
                "level": o.level.value,
                "include": list(o.include),
                "exclude": list(o.exclude),
            }
            for o in settings.opt_ins
        ],
        "queued": counts["queued"],
        "sent": counts["sent"],
        "set_aside": counts["set_aside"],
        "quarantined": counts["quarantined"],
        "superseded": counts["superseded"],
        "last_run_at": settings.last_run_at,
        "last_success_at": settings.last_success_at,
        "last_error": settings.last_error,
        "set_aside_episodes": [
            {"id": r["episode_id"], "revision": r["revision"], "error": r["last_error"]}
            for r in outbox.listed(RowState.SET_ASIDE)
        ],
        "quarantined_episodes": [
            {"id": r["episode_id"], "revision": r["revision"], "reason": r["last_error"]}
            for r in outbox.listed(RowState.QUARANTINED)
        ],
    }
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    state = "enabled" if settings.enabled else "disabled (nothing is sent)"
    print(f"sync      {state}" + (f" -> {settings.url}" if settings.url else ""))
    if not settings.opt_ins:
        print("workspaces none opted in")
    for o in settings.opt_ins:
        where = "every workspace not taken out by name (--all)" if o.root == ALL else o.root
        globs = "".join(
            [
                f"; only {', '.join(o.include)}" if o.include else "",
                f"; never {', '.join(o.exclude)}" if o.exclude else "",
            ]
        )
        print(f"opt-in    {where} ({o.level.value}{globs})")
    for w in states:
        if w.included:
            print(f"in        {w.root} ({w.level}; {w.why})")
        else:
            print(f"out       {w.root} ({w.why})")
    print(
        f"outbox    {report['queued']} queued, {report['sent']} sent, "
        f"{report['set_aside']} set aside, {report['quarantined']} quarantined"
    )
    print(
        f"last run  {_when(settings.last_run_at)}; last success {_when(settings.last_success_at)}"
    )
    if settings.last_error:
        print(f"last error {settings.last_error}")
    for r in report["set_aside_episodes"]:
        print(f"set aside   {r['id']} rev {r['revision']}: {r['error']}")
    for r in report["quarantined_episodes"]:
        print(f"quarantined {r['id']} rev {r['revision']}: {r['reason']}")
    return 0


def _preview(ctx: Context, args: argparse.Namespace) -> int:
    from sync.outbox import Outbox, Row, body_for
    from sync.service import anonymizer_for, fill_outbox
    from sync.settings import load_settings

    store = ctx.store
    settings = load_settings(store.conn)
    episode_id = store.resolve_episode_id(args.episode) if args.episode else None
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    anonymizer = anonymizer_for(store, ctx.config)
    notes: list[str] = []
    rows: list[Row]
    if settings.active:
        fill_outbox(store, ctx.config, settings, now=ctx.now(), anonymizer=anonymizer)
        rows = Outbox(store.conn).queued(episode_id)
        if episode_id is not None and not rows:
            notes.append(_why_not_queued(store, settings, episode_id))
            rows = _fresh_rows(store, settings, anonymizer, [episode_id], args, notes)
    else:
        level = args.level or "redacted"
        notes.append(
            f"sync is not enabled: this is what would go at level {level} "
            "(nothing is queued or sent)"
        )
        ids = [episode_id] if episode_id is not None else None
        rows = _fresh_rows(store, settings, anonymizer, ids, args, notes)
    if args.limit is not None:
        rows = rows[: args.limit]
    if args.json:
        sys.stdout.buffer.write(body_for(rows))
        sys.stdout.buffer.write(b"\n")
        sys.stdout.flush()
        for note in notes:
            print(f"capture: {note}", file=sys.stderr)
        return 0
    for note in notes:
        print(note)
    if not rows:
        print("nothing is waiting to be sent")
        return 0
    print(f"{len(rows)} episode(s) would be sent:")
    for row in rows:
        print(f"\n== episode {row.episode_id} revision {row.revision} ({row.level})")
        print(json.dumps(json.loads(row.payload), indent=2, ensure_ascii=False))
    return 0


def _fresh_rows(
    store: Any,
    settings: Any,
    anonymizer: Any,
    ids: list[str] | None,
    args: argparse.Namespace,
    notes: list[str],
) -> list[Any]:
    """Projections computed now and queued nowhere: for an episode not in the outbox, or for
    every settled episode while sync is off."""
    from capture.store.episodes import load_episodes
    from sync.anonymize.levels import Level
    from sync.anonymize.pipeline import WorkspacePolicy, content_hash
    from sync.outbox import Outbox, Row, next_revision

    outbox = Outbox(store.conn)
    rows = []
    for e in load_episodes(store, ids=ids):
        if ids is None and e["settled_at"] is None:
            continue
        opt_in = settings.opt_in_for(e["workspace"]) if settings.enabled else None
        if args.level or opt_in is None:
            policy = WorkspacePolicy(Level(args.level or "redacted"))
        else:
            policy = opt_in.policy
        projection = anonymizer.project(e, policy)
        if projection.episode is None:
            notes.append(f"{e['id']}: every file it touched is excluded; nothing goes")
            continue
        if projection.quarantine:
            notes.append(f"{e['id']}: would be quarantined: {'; '.join(projection.quarantine)}")
            continue
        serialized = projection.serialized or ""
        last = outbox.last_row(e["id"])
        latest = (last["revision"], last["content_hash"]) if last else None
        revision = next_revision(latest, content_hash(serialized))
        if revision is None:
            revision = last["revision"] if last else 1
        rows.append(Row(0, e["id"], revision, policy.level.value, serialized, 0))
        if args.limit is not None and len(rows) >= args.limit:
            break
    return rows


def _why_not_queued(store: Any, settings: Any, episode_id: str) -> str:
    from sync.outbox import Outbox
    from sync.store.episode_rows import episode_place

    try:
        settled_at, root = episode_place(store.conn, episode_id)
    except LookupError:
        raise NotFoundError(f"no episode {episode_id}") from None
    if settings.opt_in_for(root) is None:
        return f"{episode_id}: its workspace is not opted in; this is what would go"
    if settled_at is None:
        return f"{episode_id}: not settled yet (outcomes pending); this is what would go then"
    last = Outbox(store.conn).last_row(episode_id)
    if last is None:
        return f"{episode_id}: every file it touched is excluded; nothing goes"
    state = last["state"]
    if state == "sent":
        return f"{episode_id}: revision {last['revision']} was sent and nothing changed since"
    if state == "quarantined":
        return f"{episode_id}: quarantined ({last['last_error']}); it will not be sent"
    return f"{episode_id}: revision {last['revision']} is {state.replace('_', ' ')}"


def _now(ctx: Context, args: argparse.Namespace) -> int:
    from sync.outbox import Outbox
    from sync.service import sync_now
    from sync.settings import load_settings
    from sync.uploader import SyncAuthError

    store = ctx.store
    settings = load_settings(store.conn)
    if not settings.enabled:
        raise CaptureError("sync is not enabled (capture sync enable --url URL --token TOKEN)")
    if not settings.opt_ins:
        raise CaptureError("no workspace is opted in (capture sync enable --workspace PATH)")
    started = time.monotonic()
    bar = _Progress(enabled=not args.quiet)
    with bar:
        anonymizing = bar.task("anonymizing", None)
        uploading = bar.task("uploading", None)
        queued_before = Outbox(store.conn).counts()["queued"]
        refreshed = [0]

        def on_refresh(done: int, total: int) -> None:
            refreshed[0] = total
            bar.update(anonymizing, done, total)

        prepared, report = sync_now(
            store,
            ctx.config,
            settings,
            deadline=time.time() + max(0.0, args.timeout),
            refresh_progress=on_refresh,
            upload_progress=lambda r: bar.update(
                uploading, r.sent + r.set_aside, queued_before + refreshed[0]
            ),
            wait_for_lock=args.timeout,
        )
    if report is None:
        raise CaptureError("another upload is running; try again when it is done")
    left = Outbox(store.conn).counts()["queued"]
    took = time.monotonic() - started
    print(
        f"{report.sent} episode(s) sent ({report.duplicates} already there), "
        f"{report.set_aside} set aside, {prepared.quarantined} newly quarantined, "
        f"{left} still queued ({took:.1f}s)"
    )
    for key in report.set_aside_ids[:10]:
        print(f"  set aside: {key}")
    if report.auth_failed:
        raise SyncAuthError(report.last_error or "the collector refused the token")
    if left:
        why = report.last_error or "time ran out"
        raise CaptureError(
            f"{left} episode(s) still queued: {why}; the next `capture sync now` or a running "
            "`capture serve` sends them"
        )
    return 0


def _retry(ctx: Context, args: argparse.Namespace) -> int:
    from sync.outbox import Outbox

    with ctx.store.transaction():
        n = Outbox(ctx.store.conn).retry_set_aside()
    print(f"{n} set-aside episode(s) queued again; `capture sync now` sends them")
    return 0


class _Progress:
    """rich progress bars on stderr when it is a terminal (and not asked to be quiet)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._progress: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self._progress = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def task(self, name: str, total: int | None) -> Any:
        return self._progress.add_task(name, total=total) if self._progress is not None else None

    def update(self, task: Any, done: int, total: int | None) -> None:
        # Called from the upload thread too: rich's Progress is thread-safe.
        if self._progress is not None and task is not None:
            self._progress.update(task, completed=done, total=total)
