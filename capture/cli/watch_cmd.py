"""`capture watch`: the watcher for terminal agents. The hook starts it on demand, detached;
`--foreground` runs it in this terminal, logging to stderr too, for debugging."""

from __future__ import annotations

import argparse
import sys

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Follow the files with pending checkpoints, record each change, evaluate every "
        "checkpoint at its due time and run the late pass when a repository's HEAD moves. "
        "One per installation; exits when nothing has been pending for a while."
    )
    parser.add_argument(
        "--foreground",
        action="store_true",
        help="stay attached to this terminal and print what the watcher does",
    )
    parser.add_argument(
        "--stay",
        action="store_true",
        help="keep running with nothing pending (as a user service does)",
    )


def run(args: argparse.Namespace) -> int:
    import contextlib
    import dataclasses
    import os
    import time

    from capture.config import load_config
    from capture.store.database import Store
    from capture.watch.lock import hold
    from capture.watch.loop import Watcher, install_signals, log_line

    config = load_config()
    handle = hold(config.paths.state_dir)
    if handle is None:
        if args.foreground:
            print("capture: a watcher already runs for this installation", file=sys.stderr)
        return 0
    if not args.foreground and hasattr(os, "setsid"):
        # started by hand: still nothing a terminal's hang-up reaches (the hook's start is
        # a session leader already, and setsid refuses it)
        with contextlib.suppress(OSError):
            os.setsid()
    # started by a first hook call, which creates the database: it is opened once there
    deadline = time.monotonic() + 10
    while not config.paths.db.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not config.paths.db.exists():
        log_line(config.paths.log_dir, "no database to watch for: exiting")
        handle.close()
        return 0
    store = Store.open(config.paths.db)
    try:
        if args.stay:
            config = dataclasses.replace(config, watcher_idle=float("inf"))
        watcher = Watcher(store, config)
        if args.foreground:
            original = watcher.log

            def both(message: str) -> None:
                print(message, file=sys.stderr, flush=True)
                original(message)

            watcher.log = both  # type: ignore[method-assign]
            watcher.watches._log = both
        install_signals(watcher)
        try:
            return watcher.run()
        except Exception as exc:
            log_line(config.paths.log_dir, f"stopped: {type(exc).__name__}: {exc}")
            raise
    finally:
        store.close()
        handle.close()
