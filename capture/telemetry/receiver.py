"""The OTLP/HTTP receiver: `POST /v1/logs`, `/v1/metrics` and `/v1/traces`, protobuf or JSON.

`OtlpReceiver` binds (loopback by default), serves requests on threads of its own and hands
the decisions it reads to one writer thread, the only one that opens the store; `capture otlp`
runs it in the foreground (`serve_forever`), and another process (the watcher) can run it
beside its own work with `start()` and `stop()`.

What a request can do is bounded: a body over `max_body` bytes (compressed or once
decompressed) is answered 413 without being read, a request that does not say its length 411,
a slow sender times out, and a body that does not decode 400. Nothing a request holds reaches
the store but the decisions translated from it, with identity attributes already dropped. Every
request leaves one receipt line in `otlp.log` (and is passed to `on_receipt`)."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from capture.config import Config
from capture.store.decision_rows import DecisionRow
from capture.telemetry.events import Decision
from capture.telemetry.otlp_decode import (
    BadRequest,
    decode,
    encode_reply,
    encode_status,
    encoding_of,
)
from capture.telemetry.translate import read_events

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY",
    "DEFAULT_PORT",
    "RECEIPT_LOG",
    "OtlpReceiver",
    "Receipt",
    "receipts_in",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4318
#: The largest request body accepted, compressed or once decompressed: 4 MiB holds several
#: thousand log records, more than an agent's exporter sends in one batch (512 by default).
DEFAULT_MAX_BODY = 4 * 1024 * 1024
#: A sender that takes longer than this to send its request is cut off.
REQUEST_TIMEOUT_S = 10.0
RECEIPT_LOG = "otlp.log"
#: Decisions written in one transaction at most (those queued while the last one was written).
WRITE_BATCH = 500
_LOG_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Receipt:
    """What one request brought: its status, and records understood, not understood."""

    at: float
    path: str
    status: int
    encoding: str | None
    bytes: int
    records: int = 0
    understood: int = 0
    not_understood: int = 0
    decisions: int = 0
    identity_dropped: int = 0
    error: str | None = None

    def line(self) -> str:
        data = {n: getattr(self, n) for n in self.__slots__ if getattr(self, n) is not None}
        return json.dumps(data, separators=(",", ":"))


def _row(decision: Decision, now: float) -> DecisionRow:
    return DecisionRow(
        agent=decision.agent,
        session_id=decision.session_id,
        call_id=decision.call_id,
        tool=decision.tool,
        decision=decision.decision,
        source=decision.source,
        explicit=decision.explicit,
        origin="otel",
        at=decision.at if decision.at is not None else now,
    )


class OtlpReceiver:
    """An OTLP/HTTP receiver writing the decisions it reads to the store at `config`'s path."""

    def __init__(
        self,
        config: Config,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        max_body: int = DEFAULT_MAX_BODY,
        on_receipt: Callable[[Receipt], None] | None = None,
    ) -> None:
        self.config = config
        self.max_body = max_body
        self.on_receipt = on_receipt
        self._decisions: queue.Queue[tuple[Decision, float] | None] = queue.Queue()
        self._log_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()
        self.server = _Server((host, port), _Handler, self)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        """Serve on background threads and return (bound already, by the constructor)."""
        writer = threading.Thread(target=self._write, name="otlp-writer", daemon=True)
        serving = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="otlp-server",
            daemon=True,
        )
        self._threads = [writer, serving]
        for thread in self._threads:
            thread.start()

    def serve_forever(self) -> None:
        """Serve until `stop()` (or KeyboardInterrupt, which stops too)."""
        self.start()
        try:
            while not self._stopped.wait(0.5):
                pass
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop serving; the decisions already received are written first."""
        if self._stopped.is_set() and not self._threads:
            return
        self._stopped.set()
        self.server.shutdown()
        self.server.server_close()
        self._decisions.put(None)
        for thread in self._threads:
            thread.join(timeout=30)
        self._threads = []

    def drained(self) -> None:
        """Wait until every decision received so far is written."""
        self._decisions.join()

    # -- on a request thread -----------------------------------------------------------------------

    def handle(self, path: str, headers: Any, body: bytes) -> tuple[int, bytes, str]:
        now = time.time()
        encoding: str | None = None
        try:
            encoding = encoding_of(headers.get("Content-Type"))
            decoded = decode(
                path,
                body,
                content_type=headers.get("Content-Type"),
                content_encoding=headers.get("Content-Encoding"),
                limit=self.max_body,
            )
        except BadRequest as exc:
            self.receipt(
                Receipt(now, path, exc.status, encoding, len(body), error=exc.message[:300])
            )
            return self.error(exc.status, exc.message, encoding)
        reading = read_events(decoded.events)
        for decision in reading.decisions:
            self._decisions.put((decision, now))
        message = "; ".join(reading.problems)
        reply = encode_reply(path, encoding, rejected=reading.not_understood, message=message[:500])
        self.receipt(
            Receipt(
                now,
                path,
                200,
                encoding,
                len(body),
                records=decoded.records,
                understood=decoded.records - reading.not_understood,
                not_understood=reading.not_understood,
                decisions=len(reading.decisions),
                identity_dropped=decoded.dropped_identity,
                error=message[:300] or None,
            )
        )
        return 200, reply, _content_type(encoding)

    def error(self, status: int, message: str, encoding: str | None) -> tuple[int, bytes, str]:
        encoding = encoding or "json"
        return status, encode_status(encoding, status, message[:300]), _content_type(encoding)

    def receipt(self, receipt: Receipt) -> None:
        if self.on_receipt is not None:
            # a receipt's reader never stops the receiver
            with contextlib.suppress(Exception):
                self.on_receipt(receipt)
        log_dir = self.config.paths.log_dir
        try:
            with self._log_lock:
                log_dir.mkdir(parents=True, exist_ok=True)
                path = log_dir / RECEIPT_LOG
                if path.exists() and path.stat().st_size > _LOG_LIMIT:
                    path.replace(log_dir / (RECEIPT_LOG + ".1"))
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(receipt.line() + "\n")
        except OSError:
            pass

    # -- on the writer thread ----------------------------------------------------------------------

    def _write(self) -> None:
        from capture.recording.recorder import Recorder
        from capture.store.database import Store

        store: Store | None = None
        try:
            while True:
                batch = [self._decisions.get()]
                # what queued meanwhile goes in the same transaction: one commit per batch
                while len(batch) < WRITE_BATCH:
                    try:
                        batch.append(self._decisions.get_nowait())
                    except queue.Empty:
                        break
                try:
                    items = [item for item in batch if item is not None]
                    if items:
                        if store is None:
                            store = Store.open(self.config.paths.db)
                        self._record(Recorder(store, self.config), items)
                finally:
                    for _ in batch:
                        self._decisions.task_done()
                if any(item is None for item in batch):
                    return
        finally:
            if store is not None:
                store.close()

    def _record(self, recorder: Any, items: list[tuple[Decision, float]]) -> None:
        try:
            with recorder.store.transaction():
                for decision, received in items:
                    recorder.explicit_decision(_row(decision, received), now=received)
            return
        except Exception:  # noqa: BLE001 - retried one by one below, so one bad one is named
            pass
        for decision, received in items:
            try:
                recorder.explicit_decision(_row(decision, received), now=received)
            except Exception as exc:  # noqa: BLE001 - one bad decision never stops the rest
                self._log_problem(f"could not record a decision: {type(exc).__name__}: {exc}")

    def _log_problem(self, message: str) -> None:
        self.receipt(Receipt(time.time(), "-", 0, None, 0, error=message[:300]))


def _content_type(encoding: str) -> str:
    return "application/x-protobuf" if encoding == "protobuf" else "application/json"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], handler: type, receiver: OtlpReceiver) -> None:
        self.receiver = receiver
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = REQUEST_TIMEOUT_S
    protocol_version = "HTTP/1.1"
    server_version = "capture-otlp"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        return  # the receipt is the log

    def _send(self, status: int, body: bytes, content_type: str, *, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, message: str) -> None:
        receiver = self.server.receiver
        try:
            encoding: str | None = encoding_of(self.headers.get("Content-Type"))
        except BadRequest:
            encoding = None
        receiver.receipt(Receipt(time.time(), self.path, status, encoding, 0, error=message))
        code, body, kind = receiver.error(status, message, encoding)
        self._send(code, body, kind, close=True)

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        receiver = self.server.receiver
        path = self.path.split("?", 1)[0]
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self._refuse(411, "a body of stated length is required (Content-Length)")
            return
        length_text = self.headers.get("Content-Length")
        try:
            length = int(length_text) if length_text is not None else -1
        except ValueError:
            length = -1
        if length < 0:
            self._refuse(411, "Content-Length required")
            return
        if length > receiver.max_body:
            self._refuse(413, f"body larger than {receiver.max_body} bytes")
            return
        body = self.rfile.read(length)
        if len(body) < length:
            self.close_connection = True
            return
        status, reply, kind = receiver.handle(path, self.headers, body)
        self._send(status, reply, kind, close=status >= 400)

    def _not_allowed(self) -> None:
        self._refuse(405, f"{self.command} is not supported: POST an OTLP export request")

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = _not_allowed  # noqa: N815


def receipts_in(log_dir: Path) -> list[dict[str, Any]]:
    """The receipts logged so far (for `capture doctor` and tests)."""
    path = log_dir / RECEIPT_LOG
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
