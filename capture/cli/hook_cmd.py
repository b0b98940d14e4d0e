"""`capture hook <agent>`: record one hook payload. Runs inside the agent's loop, once per tool
call, in a fresh interpreter: it imports only what it needs, always exits 0, prints nothing
unless the agent's protocol asks for an answer, and logs what it could not use."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import argparse

__all__ = ["MAX_PAYLOAD_BYTES", "configure", "hook", "main_fast", "run"]

#: Larger payloads are drained and dropped (logged): a hook must not stall on them.
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
_CHUNK = 1 << 20


def configure(parser: argparse.ArgumentParser) -> None:
    from capture.agents import AGENTS

    parser.description = (
        "Read one hook payload (JSON on stdin, or as the last argument as Codex's notify "
        "passes it), record it, and exit 0 whatever happens. Problems go to hooks.log."
    )
    parser.add_argument("agent", help="one of: " + ", ".join(AGENTS))
    parser.add_argument("--event", help="the hook event, for agents whose payload omits it")
    parser.add_argument("payload", nargs="?", help="the payload as an argument instead of stdin")


def run(args: argparse.Namespace) -> int:
    return hook(args.agent, args.event, args.payload)


def main_fast(argv: list[str]) -> int | None:
    """`capture hook ...` without argparse (the fast path). None: let argparse handle it
    (help, or arguments it cannot read)."""
    args = argv[1:]
    if not args or any(a in ("-h", "--help") for a in args):
        return None
    agent, rest = args[0], args[1:]
    event = payload = None
    while rest:
        token = rest.pop(0)
        if token == "--event" and rest:
            event = rest.pop(0)
        elif token.startswith("--event="):
            event = token.split("=", 1)[1]
        elif payload is None and not token.startswith("--"):
            payload = token
        else:
            return None
    return hook(agent, event, payload)


def _read_stdin(stream: BinaryIO) -> tuple[bytes, int]:
    """Up to MAX_PAYLOAD_BYTES of stdin, and its full size (the rest is drained so the agent
    never blocks writing to us)."""
    data = stream.read(MAX_PAYLOAD_BYTES + 1)
    size = len(data)
    if size > MAX_PAYLOAD_BYTES:
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
    return data, size


def hook(agent: str, event: str | None, payload_arg: str | None) -> int:
    from capture.paths import resolve_paths

    log_dir = resolve_paths().log_dir
    problems: list[str] = []
    try:
        _hook(agent, event, payload_arg, problems)
    except BaseException as exc:  # noqa: BLE001 - a hook never fails the agent
        problems.append(f"internal error: {type(exc).__name__}: {exc}")
    if problems:
        from capture.hooklog import log_line

        for problem in problems:
            log_line(log_dir, agent, event, problem)
    return 0


def _payload(payload_arg: str | None, problems: list[str]) -> tuple[dict[str, Any], str] | None:
    if payload_arg is not None:
        raw = payload_arg.encode("utf-8", "surrogateescape")
        size = len(raw)
    elif sys.stdin is None or sys.stdin.isatty():
        raw, size = b"", 0
    else:
        raw, size = _read_stdin(sys.stdin.buffer)
    if size > MAX_PAYLOAD_BYTES:
        problems.append(f"payload of {size} bytes is over the {MAX_PAYLOAD_BYTES} byte limit")
        return None
    if not raw.strip():
        problems.append("empty payload")
        return None
    try:
        text = raw.decode("utf-8")
        payload = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        problems.append(f"payload is not JSON: {exc}")
        return None
    if not isinstance(payload, dict):
        problems.append(f"payload is a JSON {type(payload).__name__}, not an object")
        return None
    return payload, text


def _hook(agent: str, event: str | None, payload_arg: str | None, problems: list[str]) -> None:
    from capture.agents import AGENTS

    if agent not in AGENTS:
        problems.append(f"unknown agent {agent!r} (known: {', '.join(AGENTS)})")
        if payload_arg is None and sys.stdin is not None and not sys.stdin.isatty():
            _read_stdin(sys.stdin.buffer)
        return
    found = _payload(payload_arg, problems)
    if found is None:
        return
    payload, text = found
    now = time.time()
    from capture.agents import read_payload

    reading = read_payload(agent, payload, os.environ, event)
    if reading.reply is not None:
        sys.stdout.write(reading.reply + "\n")
        sys.stdout.flush()
    from capture.config import load_config
    from capture.hook_ingest import ingest
    from capture.store import Store

    config = load_config()
    store = Store.open(config.paths.db)
    try:
        # an agent waits on this process: give up on a locked database sooner than the store's
        # default (the payload is then only in the log line)
        store.conn.execute("PRAGMA busy_timeout=10000")
        report = ingest(store, config, reading, text, now=now, fallback_cwd=os.getcwd())
    finally:
        store.close()
    problems.extend(report.problems)
