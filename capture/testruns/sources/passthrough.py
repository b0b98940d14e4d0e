"""Running a command as if the user's shell ran it, keeping a copy of what it printed.

The child keeps our stdin and our process group (so the terminal's Ctrl-C and Ctrl-Z reach it
directly). Its stdout and stderr each go through a channel we copy to our own, byte for byte:
a pseudo-terminal where ours is a terminal (so the child still sees a terminal and keeps its
colours; output post-processing is turned off on it, leaving newline translation to the real
terminal), a pipe where ours is not (as a file or pipe, the child would not see a terminal
either). When stdout and stderr are the same file, the child gets one channel for both, so
their interleaving is kept.

Signals: while the child runs, ours are blocked and collected with sigtimedwait between
copies (at least every _SIGNAL_TICK_S); the child's end is seen at once through a pidfd. A
signal some process sent to us is forwarded to the child; one the kernel generated (the
terminal's Ctrl-C, a hangup) is not, as the child, in our process group, received it too.
Once the child is gone, `exit_like` ends us the way it ended: the same exit code, or the same
signal.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import time

# Not dataclasses, not typing: `capture run` wraps every test command, and those imports
# would cost it more than the rest of what it loads before the command starts.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["TAIL_BYTES", "Finished", "exit_like", "run_command"]

#: How much of the output is kept for reading the runner's summary (the end matters).
TAIL_BYTES = 4 * 1024 * 1024
#: After the child exits, output still arriving from processes it left behind is copied until
#: the channels go quiet this long.
_IDLE_AFTER_EXIT_S = 0.1
_CHUNK = 65536
#: How often, at the longest, signals for the command are looked at while it runs (they wait,
#: blocked, until then): one thread, no signal handlers racing with the copying.
_SIGNAL_TICK_S = 0.05

_FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGALRM,
)
_WAITED = frozenset({*_FORWARDED, signal.SIGCHLD, signal.SIGWINCH})
# Python ignores these at startup; a child started by a shell would get the defaults.
_CHILD_DEFAULTS = (signal.SIGPIPE, signal.SIGXFSZ)
# Codes of signals sent by a process (kill, sigqueue, tgkill) rather than by the kernel.
_SI_USER_CODES = frozenset({0, -1, -6})


class Finished:
    """How the command ended."""

    __slots__ = ("exit_code", "signal", "started_at", "duration_s", "output")

    def __init__(
        self,
        *,
        exit_code: int,
        signal: int | None,
        started_at: float,
        duration_s: float,
        output: bytes,
    ) -> None:
        self.exit_code = exit_code  # as a shell reports it: 128 + N when signal N ended it
        self.signal = signal  # the signal that ended it
        self.started_at = started_at
        self.duration_s = duration_s
        self.output = output  # the last TAIL_BYTES of stdout and stderr, in the order they came

    def __repr__(self) -> str:
        return f"Finished(exit_code={self.exit_code}, duration_s={self.duration_s:.3f})"


class _Channel:
    __slots__ = ("read_fd", "child_fd", "dest_fds", "out_fd", "is_pty")

    def __init__(
        self, read_fd: int, child_fd: int, dest_fds: tuple[int, ...], out_fd: int, is_pty: bool
    ) -> None:
        self.read_fd = read_fd  # our end
        self.child_fd = child_fd  # the end the child writes to
        self.dest_fds = dest_fds  # where the child's fds 1/2 point to in the child
        self.out_fd = out_fd  # where we copy to
        self.is_pty = is_pty


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev)


def _open_channel(like_fd: int) -> tuple[int, int, bool]:
    if os.isatty(like_fd):
        import termios

        master, slave = os.openpty()
        try:
            attrs = termios.tcgetattr(like_fd)
            attrs[1] &= ~termios.OPOST  # the real terminal does the newline translation
            termios.tcsetattr(slave, termios.TCSANOW, attrs)
            _copy_winsize(like_fd, slave)
        except (termios.error, OSError):
            pass
        return master, slave, True
    read_fd, write_fd = os.pipe()
    return read_fd, write_fd, False


def _copy_winsize(src: int, dst: int) -> None:
    import fcntl
    import termios

    try:
        size = fcntl.ioctl(src, termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(dst, termios.TIOCSWINSZ, size)
    except OSError:
        pass


def _channels() -> list[_Channel]:
    stats: dict[int, os.stat_result] = {}
    for fd in (1, 2):
        try:
            stats[fd] = os.fstat(fd)
        except OSError:
            continue  # closed: the child inherits it as it is
    if 1 in stats and 2 in stats and _same_file(stats[1], stats[2]):
        read_fd, child_fd, is_pty = _open_channel(1)
        return [_Channel(read_fd, child_fd, (1, 2), 1, is_pty)]
    channels = []
    for fd in stats:
        read_fd, child_fd, is_pty = _open_channel(fd)
        channels.append(_Channel(read_fd, child_fd, (fd,), fd, is_pty))
    return channels


class _Copier:
    """Copies every channel to its destination, keeping the tail of what went by."""

    def __init__(self, channels: list[_Channel], poller: select.poll) -> None:
        self.channels = {c.read_fd: c for c in channels}
        self.open = set(self.channels)
        self.tail = bytearray()
        self.poller = poller
        for fd in self.channels:
            poller.register(fd, select.POLLIN)

    def _keep(self, data: bytes) -> None:
        self.tail += data
        if len(self.tail) > 2 * TAIL_BYTES:
            del self.tail[: len(self.tail) - TAIL_BYTES]

    @staticmethod
    def _write_all(fd: int, data: bytes) -> bool:
        view = memoryview(data)
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                select.select([], [fd], [])
                continue
            except InterruptedError:
                continue
            except OSError:
                return False  # our stdout is gone (EPIPE): stop copying this channel
            view = view[written:]
        return True

    def copy(self, fd: int) -> bool:
        """Copy what is waiting on one channel; False once it reached its end."""
        try:
            data = os.read(fd, _CHUNK)
        except OSError as exc:  # EIO: a pty whose writers have all gone
            if exc.errno not in (errno.EIO, errno.EBADF):
                raise
            data = b""
        if data and self._write_all(self.channels[fd].out_fd, data):
            self._keep(data)
            return True
        if data:  # could not write it: let the child meet a closed pipe, as it would
            self._keep(data)
        self.close(fd)
        return False

    def close(self, fd: int) -> None:
        if fd in self.open:
            self.poller.unregister(fd)
            self.open.discard(fd)
            os.close(fd)

    def close_all(self) -> None:
        for fd in list(self.open):
            self.close(fd)


def _reap(pid: int) -> int | None:
    try:
        waited, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None
    return status if waited == pid else None


def _pidfd(pid: int) -> int:
    """A descriptor that polls readable when the child exits (Linux 5.3+), else -1 (the
    child's end is then noticed from SIGCHLD at the next signal tick)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def run_command(argv: list[str], env: dict[str, str]) -> Finished:
    """Run `argv` to its end. Raises OSError (FileNotFoundError, PermissionError) when it
    cannot be started."""
    channels = _channels()
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    started_at = time.time()
    t0 = time.monotonic()
    try:
        actions: list[tuple[int, ...]] = []
        for channel in channels:
            for fd in channel.dest_fds:
                actions.append((os.POSIX_SPAWN_DUP2, channel.child_fd, fd))
        pid = os.posix_spawnp(
            argv[0],
            argv,
            env,
            file_actions=actions,
            setsigmask=old_mask,
            setsigdef=_CHILD_DEFAULTS,
        )
    except BaseException:
        for channel in channels:
            os.close(channel.read_fd)
            os.close(channel.child_fd)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        raise
    for channel in channels:
        os.close(channel.child_fd)
    poller = select.poll()
    copier = _Copier(channels, poller)
    pidfd = _pidfd(pid)
    if pidfd >= 0:
        poller.register(pidfd, select.POLLIN)
    status: int | None = None
    duration = 0.0
    quiet_until = 0.0
    try:
        while True:
            if status is None:
                timeout = _SIGNAL_TICK_S
            else:
                timeout = quiet_until - time.monotonic()
                if not copier.open or timeout <= 0:
                    break
            for fd, _ in poller.poll(timeout * 1000):
                if fd == pidfd:
                    poller.unregister(pidfd)
                    os.close(pidfd)
                    pidfd = -1
                    if status is None:
                        status = _reap(pid)
                elif copier.copy(fd) is False:
                    continue
                if status is not None:
                    if not duration:
                        duration = time.monotonic() - t0
                    quiet_until = time.monotonic() + _IDLE_AFTER_EXIT_S
            if status is None:
                status = _handle_signals(pid, [c for c in channels if c.read_fd in copier.open])
                if status is not None:
                    duration = time.monotonic() - t0
                    quiet_until = time.monotonic() + _IDLE_AFTER_EXIT_S
    finally:
        if status is None:  # only on an internal error: do not leave the child behind
            os.kill(pid, signal.SIGKILL)
            status = os.waitpid(pid, 0)[1]
        if pidfd >= 0:
            os.close(pidfd)
        copier.close_all()
        _drain_pending()
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    code = os.waitstatus_to_exitcode(status)
    signo_end = -code if code < 0 else None
    return Finished(
        exit_code=128 + signo_end if signo_end else code,
        signal=signo_end,
        started_at=started_at,
        duration_s=duration or time.monotonic() - t0,
        output=bytes(copier.tail[-TAIL_BYTES:]),
    )


def _handle_signals(pid: int, channels: list[_Channel]) -> int | None:
    """Act on the signals that arrived since the last look (`channels`: those still open);
    the child's wait status once it has ended."""
    status = None
    while (info := signal.sigtimedwait(_WAITED, 0)) is not None:
        signo = info.si_signo
        if signo == signal.SIGCHLD:
            status = _reap(pid) if status is None else status
        elif signo == signal.SIGWINCH:
            for channel in channels:
                if channel.is_pty:
                    _copy_winsize(channel.out_fd, channel.read_fd)
        elif info.si_code in _SI_USER_CODES:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signo)
    return status


def _drain_pending() -> None:
    while signal.sigtimedwait(_WAITED, 0) is not None:
        pass


def exit_like(finished: Finished) -> NoReturn:
    """End this process the way the command ended: by the same signal when one ended it (the
    shell then shows 130 for Ctrl-C, 137 for SIGKILL, and a script stops as it would have),
    else with its exit code. Nothing is left to clean up by then, so the interpreter's own
    teardown is skipped: it would only add to the wrapper's cost."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None when started with that descriptor closed
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    signo = finished.signal
    if signo is not None:
        import resource

        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file of ours
        if signo not in (signal.SIGKILL, signal.SIGSTOP):
            with contextlib.suppress(OSError, ValueError):
                signal.signal(signo, signal.SIG_DFL)
        with contextlib.suppress(OSError, ValueError):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signo})
            os.kill(os.getpid(), signo)
    os._exit(finished.exit_code & 0xFF)
