"""The LSP wiring: dispatch, lifecycle, and the features registered with the server.

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
the server. The same goes for bad input: the transport (``server.transport``) reads frames with
:class:`server.framing.FrameReader` (pygls's reader matches whole header lines only, so bytes
glued to a header lose that message and the next), and :meth:`CaptureProtocol.dispatch` refuses
envelopes pygls would choke on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from capture import __version__
from capture.edits.positions import PositionEncoding
from server.envelope import refusal
from server.feature import Context, Feature, NotificationHandler
from server.framing import FrameReader
from server.params import ParamsError
from server.workspaces import changed_folders, folder_paths

__all__ = ["CaptureProtocol", "CaptureServer", "FrameReader"]

log = logging.getLogger(__name__)


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
            if future.cancelled():
                return  # the server is exiting (an `exit` right after `shutdown`): no answer
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
                except ParamsError as exc:  # the text synchronization ones too
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
        if method == types.SHUTDOWN and "id" in data:
            server.shutdown_requested = True
        try:
            self.handle_message(message)
        except Exception:  # noqa: BLE001 - logged; the server keeps serving
            server.errors += 1
            log.exception("handling %s failed", str(method)[:100])


class CaptureServer(LanguageServer):
    """The agent-capture language server: a mirror of open documents that follows agent edits."""

    protocol: CaptureProtocol

    def __init__(self, context: Context) -> None:
        super().__init__(
            "agent-capture",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=CaptureProtocol,
        )
        self.context = context
        self.writer = context.writer
        self.raw_notifications: dict[str, NotificationHandler] = {}
        self.features: list[Feature] = []
        self.started_at = time.time()
        self.messages = 0
        self.bad_messages = 0
        self.errors = 0
        # One reader per connection (the server serves one): its counters are the bad frames.
        self.frames = FrameReader()
        self.exit_code: int | None = None
        self.exited = asyncio.Event()
        self._closing: asyncio.Future[None] | None = None
        self.shutdown_requested = False
        self.raw_notifications[types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS] = self._folders_changed
        # pygls sets attributes on what it registers: plain functions, not bound methods.
        self.feature(types.INITIALIZE)(_function(self._initialize))
        self.feature(types.INITIALIZED)(_function(self._initialized))
        self.feature(types.SHUTDOWN)(_coroutine(self._shutdown))
        # Never called (the notification takes the direct path); it makes pygls announce it.
        self.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(_noop)

    def add_feature(self, feature: Feature) -> None:
        """Register ``feature``: its notifications, its commands, its hooks (in this order)."""
        for method, handler in feature.notifications().items():
            if method in self.raw_notifications:
                raise ValueError(f"{method} is handled twice")
            self.raw_notifications[method] = handler
        for name, command in feature.commands().items():
            self.command(name)(_coroutine(command))
        self.context.events.register(feature)
        self.features.append(feature)

    # ------------------------------------------------------------------ lifecycle

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the threads (before ``initialize``: a restarted server resumes at once)."""
        self.context.loop = loop
        self.writer.start(loop)
        for feature in self.features:
            feature.serving()

    async def close(self) -> None:
        """Stop the features (the proposals write what the editor's buffers hold), commit.
        Once: a second call (the `exit` that follows `shutdown` at once) waits for the first."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        for feature in self.features:
            try:
                await feature.stop()
            except Exception:  # noqa: BLE001
                log.exception("stopping %s failed", type(feature).__name__)
        await asyncio.gather(self.writer.flush(), return_exceptions=True)

    def request_exit(self) -> None:
        shut = self.protocol._shutdown or self.shutdown_requested
        if self.shutdown_requested and not self.protocol._shutdown:
            log.warning("exit before the shutdown was answered: the shutdown finishes first")
        self.exit_code = 0 if shut else 1
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
        figures: dict[str, Any] = {
            "version": __version__,
            "pid": os.getpid(),
            "uptimeS": round(time.time() - self.started_at, 1),
            "positionEncoding": self.context.encoding.value,
            "messages": self.messages,
            "badMessages": self.bad_messages,
            "badFrames": self.frames.bad_frames,
            "errors": self.errors,
            "refusedOutside": self.context.refused_outside,
            "writeQueue": self.writer.queued,
            "failedWrites": self.writer.failed_jobs,
            "droppedEvents": self.writer.dropped_events,
            "requestFutures": len(self.protocol._request_futures),
        }
        for feature in self.features:
            figures.update(feature.diagnostics())
        return figures

    # ------------------------------------------------------------------ LSP handlers

    def _initialize(self, params: types.InitializeParams) -> None:
        context = self.context
        encoding = self.protocol.workspace.position_encoding
        try:
            context.encoding = PositionEncoding(str(encoding or "utf-16"))
        except ValueError:
            context.encoding = PositionEncoding.UTF16
        folders = [f.uri for f in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        if not folders and params.root_path:
            folders = [params.root_path]
        context.folders = folder_paths(folders)
        options = params.initialization_options
        if isinstance(options, dict):
            context.allow_outside = options.get("allowOutsideWorkspace") is True
        log.info(
            "initialize: client %s, encoding %s, folders %s",
            params.client_info.name if params.client_info else "?",
            context.encoding.value,
            context.folders,
        )

    def _initialized(self, params: types.InitializedParams) -> None:
        for feature in self.features:
            feature.initialized()

    async def _shutdown(self, params: None) -> None:
        await self.close()

    def _folders_changed(self, params: Any, raw: bytes) -> None:
        self.context.folders = changed_folders(self.context.folders, params)
        log.info("workspace folders now %s", self.context.folders)


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
