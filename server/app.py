"""The LSP wiring: transport, dispatch, lifecycle, and the features registered with the server.

pygls answers the protocol's requests (``initialize`` with its position-encoding negotiation
and capabilities, ``shutdown``, ``workspace/executeCommand``...). Notifications that a
feature registered — the text synchronization ones, sent per keystroke, and the ``capture/*``
ones — skip pygls's model classes and go straight to their handler with the decoded JSON.
That path also keeps clear of two costs of pygls 2.1.1: its stdin reader hands every header
line and body to a thread pool, and its workspace document copies the whole text per change.

pygls 2.1.1 keeps a ``Future`` in ``protocol._request_futures`` for every message handled by a
generator (all the built-in handlers) or awaited inside one, under a random id that nothing
removes: kilobytes per message, forever. :class:`CaptureProtocol` removes each entry when its
future completes.

A handler's error is logged and nothing more: it is never shown in the editor and never stops
the server. The same goes for bad input: the transport here reads frames with
:class:`server.framing.FrameReader` (pygls's reader matches whole header lines only, so bytes
glued to a header lose that message and the next), and :meth:`CaptureProtocol.dispatch` refuses
envelopes pygls would choke on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from capture import __version__
from capture.config import Config
from capture.edits.positions import PositionEncoding
from server.checkpoints import Checkpoints
from server.documents import BadParams, Documents
from server.envelope import refusal
from server.feature import Feature, NotificationHandler
from server.framing import FrameReader
from server.junit_reports import ReportWatching
from server.params import ParamsError
from server.pickup import Pickup
from server.proposals import Proposals
from server.stats import Stats
from server.termination import on_termination
from server.testruns import TestRuns
from server.undo import Undo
from server.watcher import DiskWatcher
from server.workspaces import changed_folders, folder_paths, inside
from server.writer import StoreWriter

__all__ = ["CaptureProtocol", "CaptureServer", "serve_stdio", "serve_tcp"]

log = logging.getLogger(__name__)

_READ_SIZE = 65536
_PENDING_BATCHES = 8  # read-ahead limit: the reader waits when the loop is this far behind
_EXPECTED = (ParamsError, BadParams)


class CaptureProtocol(LanguageServerProtocol):
    _server: CaptureServer

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        futures = self._request_futures

        def done(future: Any, _id: Any = msg_id, _callback: Any = callback) -> None:
            # The pygls 2.1.1 leak: only responses to requests ever pop these entries.
            if futures.get(_id) is future:
                del futures[_id]
            _callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def dispatch(self, body: bytes) -> None:
        """Handle one message body from the wire; nothing raised escapes."""
        server = self._server
        server.messages += 1
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            server.bad_messages += 1
            log.warning("ignored a message that is not JSON: %s", str(exc)[:200])
            return
        if not isinstance(data, dict):
            server.bad_messages += 1
            log.warning("ignored a message that is not a JSON object")
            return
        problem = refusal(data)
        if problem is not None:
            server.bad_messages += 1
            log.warning("ignored a message: %s", problem)
            return
        method = data.get("method")
        if "id" not in data and isinstance(method, str):
            handler = server.raw_notifications.get(method)
            if handler is not None:
                if self._shutdown:
                    return
                try:
                    handler(data.get("params"), body)
                except _EXPECTED as exc:
                    server.bad_messages += 1
                    log.warning("%s: %s", method, exc)
                except Exception:  # noqa: BLE001 - logged; the server keeps serving
                    server.errors += 1
                    log.exception("%s failed", method)
                return
            if method == types.EXIT:
                server.request_exit()
                return
        try:
            message = self.structure_message(data)
            if not hasattr(message, "jsonrpc"):
                raise JsonRpcInvalidParams("not a JSON-RPC message")
        except Exception as exc:  # noqa: BLE001 - pygls raises several kinds here
            server.bad_messages += 1
            log.warning("ignored a malformed %s message: %s", str(method)[:100], exc)
            msg_id = data.get("id")
            if isinstance(method, str) and isinstance(msg_id, int | str):
                error = exc if isinstance(exc, JsonRpcInvalidParams) else JsonRpcInternalError()
                self._send_response(msg_id, error=error.to_response_error())
            return
        try:
            self.handle_message(message)
        except Exception:  # noqa: BLE001 - logged; the server keeps serving
            server.errors += 1
            log.exception("handling %s failed", str(method)[:100])


class CaptureServer(LanguageServer):
    """The agent-capture language server: a mirror of open documents that follows agent edits."""

    protocol: CaptureProtocol

    def __init__(self, config: Config) -> None:
        super().__init__(
            "agent-capture",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=CaptureProtocol,
        )
        self.config = config
        self.writer = StoreWriter(config.paths.db)
        self.encoding = PositionEncoding.UTF16
        self.folders: list[str] = []
        # Off by default: an agent edit named by URI must not copy any file of the machine
        # into the store. The editor opts in with initializationOptions.allowOutsideWorkspace.
        self.allow_outside = False
        self.refused_outside = 0
        self.raw_notifications: dict[str, NotificationHandler] = {}
        self.features: list[Feature] = []
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set by start()
        self.pickup: Pickup | None = None
        self.started_at = time.time()
        self.messages = 0
        self.bad_messages = 0
        self.errors = 0
        # One reader per connection (the server serves one): its counters are the bad frames.
        self.frames = FrameReader()
        self.exit_code: int | None = None
        self.exited = asyncio.Event()
        self._closed = False
        self.documents = self.add(Documents(self))
        self.proposals = self.add(Proposals(self))
        self.checkpoints = self.add(Checkpoints(self))
        self.watcher = self.add(DiskWatcher(self))
        self.add(TestRuns(self))
        self.reports = self.add(ReportWatching(self))
        self.add(Undo(self))
        self.add(Stats(self))
        self.raw_notifications[types.WORKSPACE_DID_CHANGE_WATCHED_FILES] = self._watched_files
        self.raw_notifications[types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS] = self._folders_changed
        # pygls sets attributes on what it registers: plain functions, not bound methods.
        self.feature(types.INITIALIZE)(_function(self._initialize))
        self.feature(types.INITIALIZED)(_function(self._initialized))
        self.feature(types.SHUTDOWN)(_coroutine(self._shutdown))
        # Never called (the notification takes the direct path); it makes pygls announce it.
        self.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(_noop)

    def add(self, feature: Any) -> Any:
        self.features.append(feature)
        self.raw_notifications.update(feature.notifications())
        for name, handler in feature.commands().items():
            self.command(name)(_coroutine(handler))
        return feature

    # ------------------------------------------------------------------ lifecycle

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the threads (before ``initialize``: a restarted server resumes at once)."""
        self.loop = loop
        self.writer.start(loop)
        self.pickup = Pickup(
            self.config.paths.db, loop, self.proposals.picked_up, self.proposals.known
        )
        self.pickup.start()

    async def close(self) -> None:
        """Write what the editor's buffers hold, stop the features, commit, stop the threads."""
        if self._closed:
            return
        self._closed = True
        futures = []
        for doc in list(self.documents.by_uri.values()):
            if self.proposals.in_document(doc):
                futures.append(self.proposals.persist(doc))
        for feature in self.features:
            try:
                feature.stop()
            except Exception:  # noqa: BLE001
                log.exception("stopping %s failed", type(feature).__name__)
        if self.pickup is not None:
            await asyncio.to_thread(self.pickup.stop)
        futures.append(self.writer.flush())
        await asyncio.gather(*futures, return_exceptions=True)

    def request_exit(self) -> None:
        self.exit_code = 0 if self.protocol._shutdown else 1
        self.exited.set()

    def terminated(self) -> None:
        """A termination signal, once the input was drained: end as a clean exit would."""
        if not self.exited.is_set():
            self.exit_code = 0
            self.exited.set()

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would send window/showMessage; errors belong in the log, not the editor.
        if source is FeatureRequestError or isinstance(
            error, JsonRpcMethodNotFound | JsonRpcInvalidParams | JsonRpcInvalidRequest
        ):
            self.bad_messages += 1  # the client got an error response; nothing broke here
            log.warning("%s", error)
            return
        self.errors += 1
        log.error("%s: %s", getattr(source, "__name__", source), error)

    def diagnostics(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "pid": os.getpid(),
            "uptimeS": round(time.time() - self.started_at, 1),
            "positionEncoding": self.encoding.value,
            "messages": self.messages,
            "badMessages": self.bad_messages,
            "badFrames": self.frames.bad_frames,
            "errors": self.errors,
            "refusedOutside": self.refused_outside,
            "writeQueue": self.writer.queued,
            "failedWrites": self.writer.failed_jobs,
            "droppedEvents": self.writer.dropped_events,
            "requestFutures": len(self.protocol._request_futures),
            "checkpointsObserved": self.checkpoints.observed,
            "diskEvents": self.watcher.events,
            "diskReads": self.watcher.reads,
            "reportWatchers": len(self.reports.watchers),
        }

    # ------------------------------------------------------------------ LSP handlers

    def _initialize(self, params: types.InitializeParams) -> None:
        encoding = self.protocol.workspace.position_encoding
        try:
            self.encoding = PositionEncoding(str(encoding or "utf-16"))
        except ValueError:
            self.encoding = PositionEncoding.UTF16
        folders = [f.uri for f in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        if not folders and params.root_path:
            folders = [params.root_path]
        self.folders = folder_paths(folders)
        options = params.initialization_options
        if isinstance(options, dict):
            self.allow_outside = options.get("allowOutsideWorkspace") is True
        log.info(
            "initialize: client %s, encoding %s, folders %s",
            params.client_info.name if params.client_info else "?",
            self.encoding.value,
            self.folders,
        )

    def _initialized(self, params: types.InitializedParams) -> None:
        for feature in self.features:
            feature.start()

    async def _shutdown(self, params: None) -> None:
        await self.close()

    def _folders_changed(self, params: Any, raw: bytes) -> None:
        self.folders = changed_folders(self.folders, params)
        log.info("workspace folders now %s", self.folders)

    def refuse_outside(self, path: str, what: str) -> bool:
        """True (and one logged line) when ``path`` is outside the workspace folders and
        such paths are not allowed."""
        if self.allow_outside or inside(path, self.folders):
            return False
        self.refused_outside += 1
        log.warning("%s refused: %s is outside the workspace folders", what, path[:300])
        return True

    def _watched_files(self, params: Any, raw: bytes) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("changes"), list):
            raise ParamsError("changes must be a list")
        for change in params["changes"]:
            uri = change.get("uri") if isinstance(change, dict) else None
            if isinstance(uri, str) and uri.startswith("file:"):
                path = to_fs_path(uri)
                if path and path in self.proposals.by_file:
                    self.watcher.changed(path)


def _noop(*args: Any) -> None:
    return None


def _function(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args):  # unannotated: pygls reads the signature of what it registers
        return method(*args)

    return call


def _coroutine(method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args):  # unannotated: pygls reads the signature of what it registers
        return await method(*args)

    return call


# ---------------------------------------------------------------------- transport


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
