"""`capture collector`: run the team collector, and manage its tokens and webhook secrets.

The collector lives in `sync/` (a shell around the core); it is imported only when this command
runs, so the rest of `capture` never pays for FastAPI or a database driver.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any

from capture.episode.vocabulary import LEVELS
from capture.errors import ConfigError, InputError, StoreError
from capture.paths import resolve_paths

__all__ = ["configure", "run"]

DB_ENV = "CAPTURE_COLLECTOR_DB"


def _default_db() -> str:
    return os.environ.get(DB_ENV) or f"sqlite:///{resolve_paths().data_dir / 'collector.db'}"


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=None,
        help="sqlite:///PATH or postgresql://... (default: $CAPTURE_COLLECTOR_DB, else "
        "collector.db in the data directory)",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="collector_command", metavar="ACTION", required=True)

    serve = sub.add_parser("serve", help="run the collector (HTTP, OpenAPI at /openapi.json)")
    _add_db(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8737, help="port (0: any free port)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes")
    serve.add_argument("--max-body-mb", type=float, default=16.0, help="largest body (gzip'd)")
    serve.add_argument("--max-batch", type=int, default=1000, help="most episodes per request")
    serve.add_argument("--rate", type=float, default=20.0, help="requests/s per token")
    serve.add_argument("--burst", type=int, default=40, help="requests a token may burst")
    serve.add_argument(
        "--max-level", choices=LEVELS, default="full", help="most detailed level stored"
    )
    serve.add_argument(
        "--min-contributors",
        type=int,
        default=5,
        help="report groups with fewer distinct contributors show no figure",
    )
    serve.add_argument("--access-log", action="store_true", help="log every request")

    _configure_export(sub)

    migrate = sub.add_parser("migrate", help="create or upgrade the collector's database")
    _add_db(migrate)

    token = sub.add_parser("token", help="create, list or revoke bearer tokens")
    token_sub = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    create = token_sub.add_parser("create", help="make a token (shown once)")
    _add_db(create)
    create.add_argument("--team", required=True, help="the team the token acts for")
    create.add_argument(
        "--scope",
        required=True,
        choices=("ingest", "read", "export"),
        help="ingest: upload; read: the report; export: the report and the export",
    )
    create.add_argument("--name", help="a label, e.g. who holds it")
    create.add_argument(
        "--expires",
        metavar="LIFETIME",
        help="refused after this long: hours, days or weeks (12h, 90d, 4w); default never",
    )
    create.add_argument("--json", action="store_true", help="print JSON")
    listing = token_sub.add_parser("list", help="list tokens (never their secrets)")
    _add_db(listing)
    listing.add_argument("--team", help="only this team's")
    listing.add_argument("--json", action="store_true", help="print JSON")
    revoke = token_sub.add_parser("revoke", help="revoke a token by its id")
    _add_db(revoke)
    revoke.add_argument("token_id", metavar="ID", help="the id shown by `token list`")

    secret = sub.add_parser(
        "webhook-secret",
        help="the team's forge webhook secret (created if it has none; printed last)",
    )
    _add_db(secret)
    secret.add_argument("--team", required=True, help="the team the forge's deliveries are for")


def _configure_export(sub: Any) -> None:
    from capture.cli.export_cmd import common_options

    export = sub.add_parser(
        "export",
        help="a team's stored episodes as training data (the formats of `capture export`)",
    )
    _add_db(export)
    export.add_argument("--team", required=True, help="the team whose episodes to export")
    export.add_argument(
        "--min-contributors",
        type=int,
        default=5,
        help="forge.json: groups with fewer distinct contributors show no figure",
    )
    common_options(export)


def _export(args: argparse.Namespace, storage: Any) -> int:
    from capture.cli.export_cmd import plan_from, progress, summary
    from capture.cli.when import parse_since
    from capture.export.writer import run_export
    from sync.collector.export import training_episodes

    since = parse_since(args.since, time.time()) if args.since else None
    # The episodes are stored at the level they were uploaded at: none is raised here.
    plan = plan_from(args, "as uploaded", {"team": args.team, "source": "collector"})
    from sync.collector.forge_export import with_forge
    from sync.collector.forge_link import build_index
    from sync.collector.forge_report import ForgeTally, forge_figures, tallied

    # The forge's verdict (review, merge, CI) on the episodes whose lines a pull request held.
    index = build_index(storage.deliveries(args.team))
    episodes = with_forge(training_episodes(storage.export_rows(args.team, since, None)), index)
    tally = ForgeTally()
    with progress(None, args.quiet) as advance:
        result = run_export(tallied(episodes, tally), plan, lambda e: (e, None), advance=advance)
    # Beside the data: the forge's figures per agent and model (groups of 5+ contributors).
    figures = forge_figures(tally, args.team, args.min_contributors)
    (plan.out_dir / "forge.json").write_text(json.dumps(figures, indent=2) + "\n")
    if not args.quiet:
        print(
            summary(result).replace("capture export", "capture collector export"), file=sys.stderr
        )
    return 0


def _require_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import orjson  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"the collector needs its extra ({exc.name} is missing): "
            "pip install '.[collector]' in a clone of agent-capture"
        ) from None


def _open(url: str) -> Any:
    try:
        import orjson  # noqa: F401
    except ImportError:
        raise ConfigError(
            "the collector needs its extra: pip install '.[collector]' in a clone of agent-capture"
        ) from None
    from sync.collector.storage import StorageUrlError, open_storage

    try:
        storage = open_storage(url)
    except StorageUrlError as exc:
        raise InputError(str(exc)) from None
    except ImportError as exc:
        raise ConfigError(
            f"{exc.name} is missing: pip install '.[collector]' in a clone of agent-capture"
        ) from None
    except Exception as exc:  # noqa: BLE001 - driver errors differ per backend
        raise StoreError(f"cannot open the collector database: {_first_line(exc)}") from None
    try:
        storage.migrate()
    except Exception as exc:  # noqa: BLE001 - driver errors differ per backend
        storage.close()
        raise StoreError(f"cannot open the collector database: {_first_line(exc)}") from None
    return storage


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _when(ts: float | None) -> str:
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def run(args: argparse.Namespace) -> int:
    url = args.db or _default_db()
    if args.collector_command == "serve":
        return _serve(args, url)
    if args.collector_command == "export":
        # checked before the database is opened: a bad option leaves nothing behind
        from capture.cli.export_cmd import plan_from
        from capture.cli.when import parse_since

        plan_from(args, "as uploaded", {})
        if args.since:
            parse_since(args.since, time.time())
    storage = _open(url)
    try:
        if args.collector_command == "export":
            return _export(args, storage)
        if args.collector_command == "migrate":
            print(f"capture collector: database is current ({storage.kind})")
            return 0
        if args.collector_command == "webhook-secret":
            return _webhook_secret(args, storage)
        return _token(args, storage)
    finally:
        storage.close()


def _webhook_secret(args: argparse.Namespace, storage: Any) -> int:
    from sync.collector.forge import new_secret
    from sync.collector.wire import TEAM_PATTERN

    if not re.match(TEAM_PATTERN, args.team):
        raise InputError(f"not a team name: {args.team!r} (letters, digits, _ . -; 64 at most)")
    secret = storage.ensure_webhook_secret(args.team, new_secret(), time.time())
    print(
        f"capture collector: webhook secret of team {args.team}; the URLs are "
        f"/webhooks/github?team={args.team} and /webhooks/gitlab?team={args.team}"
    )
    print(secret)
    return 0


def _serve(args: argparse.Namespace, url: str) -> int:
    _require_extra()
    from sync.collector.limits import Limits
    from sync.collector.serve import serve
    from sync.collector.storage import StorageUrlError

    if args.workers < 1 or args.max_batch < 1 or args.rate <= 0 or args.burst < 1:
        raise InputError("--workers, --max-batch, --rate and --burst must be positive")
    max_body = int(args.max_body_mb * 1024 * 1024)
    limits = Limits(
        max_body_bytes=max_body,
        max_decoded_bytes=max(max_body, Limits().max_decoded_bytes),
        max_batch=args.max_batch,
        rate=args.rate,
        burst=args.burst,
        max_level=args.max_level,
        min_contributors=args.min_contributors,
    )
    try:
        serve(
            url,
            host=args.host,
            port=args.port,
            limits=limits,
            workers=args.workers,
            access_log=args.access_log,
            log_level="debug" if args.debug else "warning",
        )
    except StorageUrlError as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    except Exception as exc:  # noqa: BLE001 - the database failed to open or migrate
        if args.debug:
            raise
        raise StoreError(f"cannot open the collector database: {_first_line(exc)}") from None
    return 0


def _token(args: argparse.Namespace, storage: Any) -> int:
    from sync.collector.tokens import new_token, parse_expiry

    if args.token_command == "create":
        try:
            lifetime = parse_expiry(args.expires) if args.expires is not None else None
        except ValueError as exc:
            raise InputError(f"--expires: {exc}") from None
        try:
            token, record = new_token(args.team, args.scope, args.name, time.time(), lifetime)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        storage.add_token(record)
        if args.json:
            print(
                json.dumps(
                    {
                        "id": record.id,
                        "team": record.team,
                        "scope": record.scope,
                        "name": record.name,
                        "expires_at": _when(record.expires_at) or None,
                        "token": token,
                    }
                )
            )
        else:
            print(token)
            until = f", expires {_when(record.expires_at)}" if record.expires_at else ""
            print(
                f"capture collector: token {record.id} for team {record.team} "
                f"(scope {record.scope}{until}); it is shown only this once",
                file=sys.stderr,
            )
        return 0
    if args.token_command == "list":
        records = storage.list_tokens(args.team)
        now = time.time()
        if args.json:
            print(
                json.dumps(
                    [
                        {
                            "id": r.id,
                            "team": r.team,
                            "scope": r.scope,
                            "name": r.name,
                            "created_at": _when(r.created_at) or None,
                            "revoked_at": _when(r.revoked_at) or None,
                            "expires_at": _when(r.expires_at) or None,
                            "expired": r.expired(now),
                        }
                        for r in records
                    ],
                    indent=2,
                )
            )
            return 0
        print(
            f"{'ID':<12}  {'TEAM':<20}  {'SCOPE':<6}  {'CREATED':<20}  {'REVOKED':<20}  "
            f"{'EXPIRES':<29}  NAME"
        )
        for r in records:
            expires = _when(r.expires_at) or "never"
            if r.expired(now):
                expires += " (expired)"
            print(
                f"{r.id:<12}  {r.team:<20}  {r.scope:<6}  {_when(r.created_at):<20}  "
                f"{_when(r.revoked_at):<20}  {expires:<29}  {r.name or ''}"
            )
        return 0
    if not storage.revoke_token(args.token_id, time.time()):
        known = {r.id for r in storage.list_tokens()}
        state = "already revoked" if args.token_id in known else "no such token"
        raise InputError(f"cannot revoke {args.token_id}: {state}")
    print(f"capture collector: token {args.token_id} revoked")
    return 0
