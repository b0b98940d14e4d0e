"""Ending on a signal like on ``exit``: what the client already sent is read, then committed.

An editor that quits (or a session manager logging out) sends SIGTERM or SIGHUP, often right
after its last messages. Python's default for both ends the process at once, losing the
writer thread's backlog and whatever sat unread in the pipe. Here the signal starts the same
path as ``exit``: the reader first drains what is already in the pipe (it is quiet, or a bound
passed), then the server writes its buffers' regions and the writer commits everything queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import select
import signal
from collections.abc import Callable

__all__ = ["DRAIN_LIMIT", "on_termination"]

log = logging.getLogger(__name__)

#: Longest wait for the client's already-sent bytes before ending anyway (a client that keeps
#: writing must not keep a terminated server alive).
DRAIN_LIMIT = 2.0
#: Checks of an empty pipe, this far apart, that count as quiet.
_QUIET_CHECKS = 3
_CHECK_EVERY = 0.02
_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _pending(fd: int) -> bool:
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return False


def on_termination(
    loop: asyncio.AbstractEventLoop, end: Callable[[], None], input_fd: int | None
) -> None:
    """Call ``end`` (on the loop) after SIGTERM or SIGHUP, once the bytes pending on
    ``input_fd`` (None: none to wait for) were read."""
    started: list[float] = []

    def check(quiet: int) -> None:
        if input_fd is not None and _pending(input_fd):
            quiet = 0
        else:
            quiet += 1
        if quiet >= _QUIET_CHECKS or loop.time() - started[0] > DRAIN_LIMIT:
            end()
            return
        loop.call_later(_CHECK_EVERY, check, quiet)

    def received(signum: int) -> None:
        if started:
            return  # already ending
        started.append(loop.time())
        log.warning(
            "%s received: reading what the client sent, committing, then exiting",
            signal.Signals(signum).name,
        )
        check(0)

    for signum in _SIGNALS:
        # Not available off the main thread (tests may run a server in a thread).
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, received, signum)
