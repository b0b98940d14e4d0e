"""`capture otlp`: the OpenTelemetry receiver in the foreground (OTLP/HTTP, loopback by
default), recording the decisions the agents' telemetry reports."""

from __future__ import annotations

import argparse
import sys

from capture.errors import InputError

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=int,
        default=4318,
        help="the port to listen on (default 4318, the OTLP/HTTP port; 0 picks a free one)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to bind (default 127.0.0.1: this machine only; another address "
        "lets other machines send telemetry here)",
    )
    parser.add_argument(
        "--max-body",
        type=int,
        default=None,
        metavar="BYTES",
        help="the largest request body accepted (default 4 MiB), compressed or not",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no receipt line per request on stderr"
    )


def run(args: argparse.Namespace) -> int:
    from capture.config import load_config
    from capture.telemetry.receiver import DEFAULT_MAX_BODY, OtlpReceiver, Receipt

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port wants a port number, not {args.port}")
    max_body = DEFAULT_MAX_BODY if args.max_body is None else args.max_body
    if max_body <= 0:
        raise InputError("--max-body wants a positive number of bytes")
    config = load_config()

    def show(receipt: Receipt) -> None:
        print(receipt.line(), file=sys.stderr, flush=True)

    try:
        receiver = OtlpReceiver(
            config,
            host=args.host,
            port=args.port,
            max_body=max_body,
            on_receipt=None if args.quiet else show,
        )
    except OSError as exc:
        raise InputError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from None
    host, port = receiver.address
    if host not in ("127.0.0.1", "::1") and not host.startswith("127."):
        print(
            f"capture otlp: warning: listening on {host}, not loopback only: anyone who can "
            "reach this port can send telemetry (nothing authenticates them)",
            file=sys.stderr,
            flush=True,
        )
    print(
        f"capture otlp: listening on http://{host}:{port} (POST /v1/logs, /v1/metrics, /v1/traces)",
        file=sys.stderr,
        flush=True,
    )
    try:
        receiver.serve_forever()
    except KeyboardInterrupt:
        return 0
    return 0
