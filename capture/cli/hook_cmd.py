"""`capture hook <agent>`: record one hook payload. Runs inside the agent's loop, once per tool
call, in a fresh interpreter: it imports only what it needs, always exits 0, prints nothing
unless the agent's protocol asks for an answer, and logs what it could not use."""

from __future__ import annotations

import os
import sys
import time

from capture.hooks.payloads import MAX_PAYLOAD_BYTES, parse_payload, reply_for

# Not `from typing import ...`: the hook's fast lane pays for every import it makes.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import BinaryIO

    from capture.config import Config
    from capture.hooks.snapshot import Snapshot
    from capture.store.database import Store

__all__ = [
    "configure",
    "drain_queue",
    "hook",
    "hook_now",
    "main_fast",
    "read_args",
    "run",
    "start_watcher",
]

_CHUNK = 1 << 20


def configure(parser: argparse.ArgumentParser) -> None:
    from capture.hooks.agents import AGENTS

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
    """`capture hook ...` without argparse. None only when help is asked for (argparse prints
    it); anything else exits 0, and what could not be used is logged (an agent runs this on
    every tool call: a mistaken hook entry must not break its loop)."""
    args = argv[1:]
    if any(a in ("-h", "--help") for a in args):
        return None
    agent, event, payload, ignored = read_args(args)
    try:
        if ignored:
            _log_ignored(agent, event, ignored)
        return hook(agent, event, payload)
    except BaseException as exc:  # noqa: BLE001 - a hook never fails the agent
        _log_ignored(agent, event, [f"internal error: {type(exc).__name__}: {exc}"])
        return 0


def read_args(args: list[str]) -> tuple[str, str | None, str | None, list[str]]:
    """The agent, event and payload argument of `capture hook`, and what was ignored (each
    said for the log). Never fails: an unknown option, a bare `--event`, a second payload or an
    event UTF-8 cannot hold are ignored, a missing agent is the empty name (unknown)."""
    ignored: list[str] = []
    rest = list(args)
    agent = rest.pop(0) if rest else ""
    if not agent:
        ignored.append("no agent named")
    event = payload = None
    while rest:
        token = rest.pop(0)
        if token == "--event" or token.startswith("--event="):
            value = token.split("=", 1)[1] if "=" in token else (rest.pop(0) if rest else None)
            if value is None:
                ignored.append("argument '--event' without a value")
            elif not _utf8(value):
                ignored.append(f"event {value!r}: not UTF-8")
            else:
                event = value
        elif payload is None and not token.startswith("--"):
            payload = token
        else:
            ignored.append(f"argument {token!r}")
    return agent, event, payload, ignored


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _log_ignored(agent: str, event: str | None, ignored: list[str]) -> None:
    """Log what the arguments held that was not used (never raises)."""
    try:
        from capture.hooks.log import log_line
        from capture.paths import resolve_paths

        log_dir = resolve_paths().log_dir
        for item in ignored:
            log_line(log_dir, agent or "-", event, f"ignored {item}")
    except BaseException:  # noqa: BLE001 - a hook never fails the agent
        pass


def _read_stdin(stream: BinaryIO) -> tuple[bytes, int]:
    """Up to MAX_PAYLOAD_BYTES of stdin, and its full size (the rest is drained so the agent
    never blocks writing to us)."""
    data = stream.read(MAX_PAYLOAD_BYTES + 1)
    size = len(data)
    if size > MAX_PAYLOAD_BYTES:
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
    return data, size


def _raw_payload(payload_arg: str | None) -> tuple[bytes, int]:
    if payload_arg is not None:
        raw = payload_arg.encode("utf-8", "surrogateescape")
        return raw, len(raw)
    if sys.stdin is None or sys.stdin.isatty():
        return b"", 0
    return _read_stdin(sys.stdin.buffer)


def hook(agent: str, event: str | None, payload_arg: str | None) -> int:
    """Queue the payload and release the agent; a detached child applies it. Payloads the queue
    cannot take (first run, oversize, unknown agent) go the slow way, in this process."""
    from capture.hooks import inbox

    try:
        raw, size = _raw_payload(payload_arg)
    except BaseException:  # noqa: BLE001 - a hook never fails the agent
        raw, size = b"", 0
    if agent in _AGENT_NAMES and 0 < size <= MAX_PAYLOAD_BYTES and raw.strip():
        path = inbox.db_path(os.environ)
        cwd = os.getcwd()
        snapshots = _snapshots(raw, cwd, event)
        if inbox.enqueue(path, agent, event, raw, cwd, inbox.queue_env(), snapshots=snapshots):
            reply = reply_for(agent, event, raw)
            if reply is not None:
                sys.stdout.write(reply + "\n")
                sys.stdout.flush()
            edited = [s.path for s in snapshots]
            if not inbox.detach(lambda: drain_queue(edited=edited)):
                drain_queue(edited=edited)
            return 0
    return hook_now(agent, event, raw, size)


def _snapshots(raw: bytes, cwd: str, event: str | None) -> list[Snapshot]:
    """The files an edit payload names, read now (never raises: a hook never fails the agent)."""
    try:
        from capture.hooks.snapshot import edit_paths, take

        paths = edit_paths(raw, cwd, event)
        if not paths:
            return []
        from capture.files import MAX_TRACKED_BYTES

        return [take(p, MAX_TRACKED_BYTES) for p in paths]
    except Exception as exc:  # noqa: BLE001 - without them the applier reads the disk, as before
        try:
            from capture.hooks.log import log_line
            from capture.paths import resolve_paths

            log_line(
                resolve_paths().log_dir,
                "-",
                event,
                f"snapshot: {type(exc).__name__}: {exc}; the edit is placed in the disk read later",
            )
        except Exception:  # noqa: BLE001 - a log that cannot be written loses only itself
            pass
        return []


#: The agents `capture hook` reads (capture.hooks.agents.AGENTS), named here without importing it.
_AGENT_NAMES = frozenset({"claude-code", "cursor", "codex", "gemini", "copilot"})


def drain_queue(*, edited: Sequence[str] = ()) -> None:
    """Apply every queued payload (in the detached child). Never raises. `edited`: the files
    the payload edits, handed to the watcher (started first when none runs) before the payload
    is applied: its first checkpoint may be due in seconds."""
    try:
        from capture.config import load_config
        from capture.hooks.queue import drain
        from capture.store.database import Store

        config = load_config()
        if not config.paths.db.exists():
            return  # removed since the payload was queued: do not make a new one
        if edited:
            _start_watcher_early(config, edited)
        store = Store.open(config.paths.db)
        try:
            drain(store, config)
            start_watcher(store, config)
        finally:
            store.close()
    except BaseException as exc:  # noqa: BLE001 - logged, never raised into the agent
        from capture.hooks.log import log_line
        from capture.paths import resolve_paths

        log_line(resolve_paths().log_dir, "-", None, f"queue: {type(exc).__name__}: {exc}")


def _start_watcher_early(config: Config, edited: Sequence[str]) -> None:
    try:
        from capture.watch.spawn import start_if_stopped

        start_if_stopped(config, edited)
    except Exception as exc:  # noqa: BLE001 - logged, never raised into the agent
        from capture.hooks.log import log_line

        log_line(config.paths.log_dir, "-", None, f"watcher: {type(exc).__name__}: {exc}")


def start_watcher(store: Store, config: Config) -> None:
    """Start the watcher when checkpoints are pending and none runs (rare: it stays up while
    anything is pending). Never raises: without it, checkpoints are measured late, as before."""
    try:
        from capture.watch.spawn import ensure_watcher

        ensure_watcher(store, config)
    except Exception as exc:  # noqa: BLE001 - logged, never raised into the agent
        from capture.hooks.log import log_line

        log_line(config.paths.log_dir, "-", None, f"watcher: {type(exc).__name__}: {exc}")


def hook_now(agent: str, event: str | None, raw: bytes, size: int) -> int:
    """The slow way: read and record the payload in this process."""
    from capture.paths import resolve_paths

    log_dir = resolve_paths().log_dir
    problems: list[str] = []
    try:
        _hook(agent, event, raw, size, problems)
    except BaseException as exc:  # noqa: BLE001 - a hook never fails the agent
        problems.append(f"internal error: {type(exc).__name__}: {exc}")
    if problems:
        from capture.hooks.log import log_line

        for problem in problems:
            log_line(log_dir, agent, event, problem)
    return 0


def _hook(agent: str, event: str | None, raw: bytes, size: int, problems: list[str]) -> None:
    from capture.hooks.agents import AGENTS

    if agent not in AGENTS:
        problems.append(f"unknown agent {agent!r} (known: {', '.join(AGENTS)})")
        return
    found = parse_payload(raw, size, problems)
    if found is None:
        return
    payload, text = found
    now = time.time()
    from capture.hooks.agents import read_payload

    reading = read_payload(agent, payload, os.environ, event)
    # The event as the reader understood it (the payload names it when the command line
    # does not); the same answer the queued path gives.
    reply = reply_for(agent, reading.call.event, b"")
    if reply is not None:
        sys.stdout.write(reply + "\n")
        sys.stdout.flush()
    from capture.config import load_config
    from capture.hooks.ingest import REPLAY_ENV, ingest
    from capture.store.database import Store

    config = load_config()
    store = Store.open(config.paths.db)
    if config.watcher:
        from capture.hooks.snapshot import edit_paths

        edited = edit_paths(raw, os.getcwd(), event)
        if edited:
            _start_watcher_early(config, edited)
    try:
        # an agent waits on this process: give up on a locked database sooner than the store's
        # default (the payload is then only in the log line)
        store.set_busy_timeout(10_000)
        report = ingest(
            store,
            config,
            reading,
            text,
            now=now,
            fallback_cwd=os.getcwd(),
            replayed=os.environ.get(REPLAY_ENV) == "1",
        )
        start_watcher(store, config)
    finally:
        store.close()
    from capture.hooks.spool import ensure

    ensure(str(config.paths.db.parent))  # room for payloads a full disk would refuse later
    problems.extend(report.problems)
