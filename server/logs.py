"""Where the server's log goes: a rotated file in the state directory, and stderr.

Records are handed to a queue and written by a listener thread, so a handler that logs never
waits on the disk. The queue is bounded: a client sending garbage faster than the disk takes
its log lines (one per bad message) must not grow the server's memory without end, so past the
bound records are dropped, and the next one that fits says how many were. Nothing is ever
shown in the editor: a user reads the log file (or the editor's LSP log, which collects
stderr).
"""

from __future__ import annotations

import logging
import logging.handlers
import queue
import sys
from pathlib import Path

__all__ = ["LOG_FILE_NAME", "MAX_PENDING_RECORDS", "setup_logging"]

LOG_FILE_NAME = "server.log"
#: Log records waiting for the listener past which new ones are dropped (and counted).
MAX_PENDING_RECORDS = 2_000
_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


class _BoundedQueueHandler(logging.handlers.QueueHandler):
    def __init__(self, records: queue.Queue[logging.LogRecord]) -> None:
        super().__init__(records)
        self.dropped = 0
        self._reported = 0

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            if self.dropped > self._reported:
                missed = self.dropped - self._reported
                note = logging.LogRecord(
                    "server.logs",
                    logging.WARNING,
                    __file__,
                    0,
                    "%d log records dropped: they came faster than the log is written",
                    (missed,),
                    None,
                )
                self.queue.put_nowait(note)
                self._reported = self.dropped
            self.queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1


def _not_a_client_mistake(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Unable to deserialize message")


def setup_logging(
    log_dir: Path | None, level: str = "INFO", stderr_level: str = "WARNING"
) -> logging.handlers.QueueListener:
    """Route the ``server``, ``capture`` and ``pygls`` loggers through a queue to the file and
    stderr. Returns the started listener (stop it to flush)."""
    handlers: list[logging.Handler] = []
    formatter = logging.Formatter(_FORMAT)
    error = None
    if log_dir is not None:
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
            file_handler = logging.handlers.RotatingFileHandler(
                log_dir / LOG_FILE_NAME, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
            )
            file_handler.setLevel(level.upper())
            file_handler.setFormatter(formatter)
            handlers.append(file_handler)
        except OSError as exc:
            error = exc
    stream = logging.StreamHandler(sys.stderr)
    stream.setLevel(stderr_level.upper())
    stream.setFormatter(formatter)
    handlers.append(stream)
    records: queue.Queue[logging.LogRecord] = queue.Queue(MAX_PENDING_RECORDS)
    listener = logging.handlers.QueueListener(records, *handlers, respect_handler_level=True)
    listener.start()
    queue_handler = _BoundedQueueHandler(records)
    root_level = min(
        logging.getLevelName(level.upper()), logging.getLevelName(stderr_level.upper())
    )
    for name in ("server", "capture", "asyncio", "watchdog"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [queue_handler]
        logger.setLevel(root_level)
        logger.propagate = False
    # pygls logs every message it sends at INFO; only its warnings are worth keeping.
    pygls_logger = logging.getLogger("pygls")
    pygls_logger.handlers[:] = [queue_handler]
    pygls_logger.setLevel(logging.WARNING)
    pygls_logger.propagate = False
    # pygls logs a message it cannot read at ERROR with a traceback, then raises; the dispatcher
    # answers and logs it as the client's mistake (a warning), so pygls's record goes.
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_not_a_client_mistake)
    if error is not None:
        logging.getLogger("server").warning("cannot write the log file in %s: %s", log_dir, error)
    return listener
