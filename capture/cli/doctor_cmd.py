from __future__ import annotations

import argparse
import json
import platform
import sys
from importlib import metadata
from typing import Any

from capture import __version__
from capture.cli.context import Context
from capture.connection import SAFE_SQLITE, library_name, sqlite_version, wal_reset_safe
from capture.store.summary_rows import database_state
from capture.store.time_rows import unreadable_times

_PACKAGES = (
    "pygls",
    "lsprotocol",
    "watchdog",
    "sqlite-utils",
    "pysqlite3",
    "httpx",
    "rapidfuzz",
    "rich",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--retry",
        action="store_true",
        help="apply again the hook payloads set aside because applying them failed",
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="recover a damaged database into a new file (SQLite's recovery; the damaged file "
        "is kept beside it); stop capture serve first",
    )


def _versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _repair(ctx: Context) -> int:
    from capture.store.repair import repair

    done = repair(ctx.config.paths.db)
    rows = sum(done.counts.values())
    print(
        f"repaired  {done.database}: {rows} row(s) recovered in {len(done.counts)} table(s), "
        f"integrity {done.integrity}; the damaged file is kept as {done.kept}"
    )
    if done.unreadable:
        print(f"          unreadable, left empty: {', '.join(done.unreadable)}")
    return 0


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    if args.repair:
        code = _repair(ctx)
        if code:
            return code
    paths = ctx.config.paths
    report: dict[str, Any] = {
        "agent_capture": __version__,
        "python": platform.python_version(),
        "sqlite": sqlite_version(),
        "sqlite_library": library_name(),
        # several processes write one WAL database: a library before the fix risks it
        "sqlite_wal_reset_safe": wal_reset_safe(sqlite_version()),
        "packages": _versions(),
        "paths": {
            "database": str(paths.db),
            "config": str(paths.config_file),
            "logs": str(paths.log_dir),
        },
        "windows": [w.label for w in ctx.config.windows],
        "late_window": ctx.config.late.seconds,
    }
    from capture.watch.report import watcher_lines, watcher_state

    report["watcher"] = watcher_state(ctx.config)
    ok = True
    try:
        store = ctx.store
        report["database"] = database_state(store.conn)
        from capture.hooks.queue import retry_set_aside, set_aside

        if args.retry:
            report["retried"] = {
                "set_aside": len(set_aside(store)),
                "applied": retry_set_aside(store, ctx.config),
            }
        # listed, not a failure: the queue went on without them, and --retry applies them
        report["database"]["set_aside"] = set_aside(store)
        steps, texts, written, stored = store.trajectory_space()
        report["database"]["trajectory"] = {
            "steps": steps,
            "texts": texts,
            "text_bytes": written,
            "stored_bytes": stored,
        }
        # listed, not a failure: every reading command leaves these rows out, alone
        report["database"]["unreadable_times"] = unreadable_times(store.conn)
        ok = report["database"]["integrity"] == "ok"
    except Exception as exc:  # noqa: BLE001 - doctor reports, it does not fail
        report["database"] = {"error": str(exc)}
        ok = False
    from capture.cli.doctor_wiring import print_wiring, wiring

    report["wired"] = wiring(ctx, with_store="error" not in report["database"])
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0 if ok else 1
    print(
        f"agent-capture {__version__}  python {report['python']}  "
        f"sqlite {report['sqlite']} ({report['sqlite_library']})"
    )
    if not report["sqlite_wal_reset_safe"]:
        safe = ".".join(map(str, SAFE_SQLITE))
        print(
            f"warning   SQLite {report['sqlite']} is older than {safe}: its WAL reset can "
            "corrupt a database that several processes write (fixed in "
            f"{safe}); `pip install 'pysqlite3>=0.6.1'` brings a current one where it has a "
            "wheel; see Files in the manual's Getting started page"
        )
    for name, version in report["packages"].items():
        print(f"  {name:<12} {version or 'MISSING'}")
    for name, value in report["paths"].items():
        print(f"{name:<9} {value}")
    print(
        f"windows   {', '.join(report['windows'])} (late check after {ctx.config.late.seconds:g}s)"
    )
    for line in watcher_lines(report["watcher"]):
        print(line)
    db = report["database"]
    from capture.store.repair import DAMAGE_HINT, is_damage

    if "error" in db:
        hint = f"; {DAMAGE_HINT}" if is_damage(db["error"]) else ""
        print(f"database  ERROR: {db['error']}{hint}")
    else:
        integrity = str(db["integrity"])
        if integrity != "ok":
            # the check's first finding only: the rest is SQLite's page-by-page detail
            first, *more = integrity.splitlines()
            extra = f" (and {len(more)} more)" if more else ""
            integrity = f"DAMAGED: {first}{extra}; {DAMAGE_HINT}"
        print(
            f"database  schema {db['schema']}/{db['expected_schema']}, {db['journal_mode']}, "
            f"integrity {integrity}"
        )
        print("          " + ", ".join(f"{n} {t}" for t, n in db["counts"].items()))
        print(f"          {db['pending_checkpoints']} checkpoint(s) waiting")
        kept = db["trajectory"]
        print(
            f"trajectory {kept['steps']} step(s), {kept['texts']} text(s) stored once: "
            f"{kept['text_bytes'] / 1e6:.1f} MB of text in {kept['stored_bytes'] / 1e6:.1f} MB"
        )
        if "retried" in report:
            retried = report["retried"]
            print(f"retried   {retried['applied']} of {retried['set_aside']} set-aside payload(s)")
        aside = db["set_aside"]
        if aside:
            print(f"hooks     {len(aside)} payload(s) set aside (capture doctor --retry):")
            for row in aside:
                print(
                    f"          #{row['id']} {row['agent']} {row['event'] or '-'} "
                    f"attempts {row['attempts']}: {row['error']}"
                )
        bad = db["unreadable_times"]
        if bad:
            print(
                f"times     {len(bad)} row(s) with a time no command can show "
                "(left out of episodes, show, export and sync):"
            )
            for row in bad:
                print(f"          {row['table']} {row['id']} {row['column']} = {row['value']}")
    print_wiring(report["wired"])
    return 0 if ok else 1
