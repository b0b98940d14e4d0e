"""`capture serve`: the LSP sidecar an editor starts (stdio by default, or TCP)."""

from __future__ import annotations

import argparse
import os
import sys

from capture.errors import InputError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)"
    )
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the log file (stderr gets warnings and errors)",
    )


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise InputError(f"--tcp wants HOST:PORT, not {value!r}")
    return host or "127.0.0.1", int(port)


def run(args: argparse.Namespace) -> int:
    from capture.config import load_config

    address = _address(args.tcp) if args.tcp else None
    config = load_config()
    # Imported here: the other subcommands must not pay for pygls.
    from server.logs import setup_logging
    from server.main import create_server
    from server.transport import serve_stdio, serve_tcp

    listener = setup_logging(config.paths.log_dir, args.log_level)
    code = 1
    background = None
    try:
        server = create_server(config)
        # Opt-in upload: a background thread when sync is enabled; nothing at all otherwise.
        from sync import sync_enabled

        if sync_enabled(config.paths.db):
            from sync.service import start_background_sync

            background = start_background_sync(config)
        if address is None:
            code = serve_stdio(server)
        else:

            def ready(where: str) -> None:
                print(f"capture serve: listening on {where}", file=sys.stderr, flush=True)

            code = serve_tcp(server, address[0], address[1], ready)
    finally:
        if background is not None:
            background.stop(timeout=2.0)
        listener.stop()
    # Everything is committed and logged. The stdin reader thread may still sit in a blocking
    # read, which the interpreter's shutdown would trip over: leave without it.
    sys.stderr.flush()
    os._exit(code)
