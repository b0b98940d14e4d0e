"""How the server meets its client: stdin and stdout, or one TCP connection.

The bytes are split into messages by the server's :class:`~server.framing.FrameReader`, off the
loop for stdin (one hand-over per chunk read, not per message), and each message goes to
:meth:`server.app.CaptureProtocol.dispatch`. Serving ends at ``exit``, at the end of input,
when the client disconnects, or at a termination signal once the input was drained; the
writer thread then commits what is queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Callable
from typing import BinaryIO

from pygls.io_ import StdoutWriter

from server.app import CaptureServer
from server.framing import FrameReader
from server.termination import on_termination

__all__ = ["serve_stdio", "serve_tcp"]

log = logging.getLogger(__name__)

_READ_SIZE = 65536
_PENDING_BATCHES = 8  # read-ahead limit: the reader waits when the loop is this far behind


def _stdio_reader(
    frames: FrameReader,
    stream: BinaryIO,
    loop: asyncio.AbstractEventLoop,
    deliver: Callable[[list[bytes]], None],
    at_eof: Callable[[], None],
    slots: threading.Semaphore,
) -> None:
    """Reader thread: framing off the loop, one hand-over per chunk read (not per message)."""
    read = getattr(stream, "read1", stream.read)
    try:
        while True:
            try:
                chunk = read(_READ_SIZE)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            bodies = frames.feed(chunk)
            if bodies:
                slots.acquire()
                loop.call_soon_threadsafe(deliver, bodies)
    finally:
        with contextlib.suppress(RuntimeError):  # the loop is gone already
            loop.call_soon_threadsafe(at_eof)


async def _run_stdio(server: CaptureServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    server.protocol.set_writer(StdoutWriter(stdout))
    server.start(loop)
    try:
        input_fd: int | None = stdin.fileno()
    except (OSError, ValueError, AttributeError):
        input_fd = None
    on_termination(loop, server.terminated, input_fd)
    slots = threading.Semaphore(_PENDING_BATCHES)

    def deliver(bodies: list[bytes]) -> None:
        try:
            for body in bodies:
                server.protocol.dispatch(body)
                if server.exited.is_set():
                    break
        finally:
            slots.release()

    def at_eof() -> None:
        if not server.exited.is_set():
            log.info("the client closed the connection")
            server.exited.set()

    threading.Thread(
        target=_stdio_reader,
        args=(server.frames, stdin, loop, deliver, at_eof, slots),
        name="capture-stdin",
        daemon=True,
    ).start()
    await server.exited.wait()
    await server.close()


def serve_stdio(server: CaptureServer) -> int:
    """Serve one client over stdin/stdout until ``exit`` or end of input."""
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    # Anything printed by mistake must not corrupt the protocol stream.
    sys.stdout = sys.stderr
    try:
        asyncio.run(_run_stdio(server, stdin, stdout))
    finally:
        server.writer.stop()
    return server.exit_code or 0


async def _run_tcp(
    server: CaptureServer, host: str, port: int, ready: Callable[[str], None]
) -> None:
    loop = asyncio.get_running_loop()
    server.start(loop)
    on_termination(loop, server.terminated, None)
    busy = False

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal busy
        if busy:
            writer.close()
            return
        busy = True
        server.protocol.set_writer(writer)
        frames = server.frames
        try:
            while not server.exited.is_set():
                chunk = await reader.read(_READ_SIZE)
                if not chunk:
                    break
                for body in frames.feed(chunk):
                    server.protocol.dispatch(body)
                    if server.exited.is_set():
                        break
        except ConnectionError:
            pass
        finally:
            server.exited.set()

    listener = await asyncio.start_server(on_client, host, port)
    address = listener.sockets[0].getsockname()
    ready(f"{address[0]}:{address[1]}")
    async with listener:
        await server.exited.wait()
    await server.close()


def serve_tcp(server: CaptureServer, host: str, port: int, ready: Callable[[str], None]) -> int:
    """Listen on ``host:port`` and serve one client until ``exit`` or disconnection."""
    try:
        asyncio.run(_run_tcp(server, host, port, ready))
    finally:
        server.writer.stop()
    return server.exit_code or 0
