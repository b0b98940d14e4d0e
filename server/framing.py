"""LSP framing: a byte stream split into message bodies by their ``Content-Length`` headers.

An editor (or a proxy between it and us) that writes a few stray bytes once must not cost the
rest of the session. Without resynchronisation, bytes glued to the front of a header make that
header unreadable, its body is then taken for the next header, and so on: every later
message, ``shutdown`` and ``exit`` included, is misread. So the reader looks for the
``Content-Length`` field anywhere in a header block, counts and skips whatever precedes it,
and so finds the next message after any garbage that does not itself look like a header.
"""

from __future__ import annotations

import logging
import re

__all__ = ["MAX_BODY", "MAX_HEADER", "FrameReader", "content_length"]

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024 * 1024  # larger messages are skipped, not buffered
MAX_HEADER = 64 * 1024

# The field, wherever it starts: stray bytes may be glued to its front on the same line.
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([0-9]+)[ \t]*(?:\r\n|$)", re.IGNORECASE)
# A well-formed header line (RFC 7230 token, a colon, a value) as the LSP base protocol allows.
_HEADER_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:[^\r\n]*\r\n")


def content_length(header: bytes) -> tuple[int | None, int]:
    """The length a header block announces (None: none usable) and how many bytes in front of
    its ``Content-Length`` field are not header lines (stray bytes to resynchronise past)."""
    matches = list(_LENGTH.finditer(header))
    if not matches:
        return None, 0
    last = matches[-1]
    prefix = header[: last.start()]
    pos = 0
    while pos < len(prefix):
        line = _HEADER_LINE.match(prefix, pos)
        if line is None:
            break
        pos = line.end()
    return int(last.group(1)), len(prefix) - pos


class FrameReader:
    """Splits a byte stream into LSP message bodies (``Content-Length`` framing).

    Garbage between messages is skipped up to the next ``Content-Length`` field; a header
    block without a usable length is dropped; a body longer than ``max_body`` is skipped, not
    buffered. ``dropped`` counts header blocks given up, ``resynced`` the times stray bytes
    were skipped to reach a header: together, the bad frames seen.
    """

    def __init__(self, max_body: int = MAX_BODY) -> None:
        self._buf = bytearray()
        self._need: int | None = None
        self._skip = 0
        self._max_body = max_body
        self.dropped = 0
        self.resynced = 0

    @property
    def bad_frames(self) -> int:
        return self.dropped + self.resynced

    def feed(self, chunk: bytes) -> list[bytes]:
        buf = self._buf
        buf += chunk
        pos = 0
        bodies: list[bytes] = []
        while True:
            if self._skip:
                n = min(self._skip, len(buf) - pos)
                pos += n
                self._skip -= n
                if self._skip:
                    break
                continue
            if self._need is None:
                end = buf.find(b"\r\n\r\n", pos)
                if end < 0:
                    if len(buf) - pos > MAX_HEADER:
                        self.dropped += 1
                        log.warning("skipped %d bytes without a message header", len(buf) - pos)
                        pos = len(buf) - 3
                    break
                length, stray = content_length(bytes(buf[pos:end]))
                pos = end + 4
                if length is None:
                    self.dropped += 1
                    log.warning("skipped a message header without a usable Content-Length")
                    continue
                if stray:
                    self.resynced += 1
                    log.warning("skipped %d stray bytes before a message header", stray)
                if length > self._max_body:
                    self.dropped += 1
                    log.warning("skipped a message of %d bytes (limit %d)", length, self._max_body)
                    self._skip = length
                    continue
                self._need = length
            if len(buf) - pos < self._need:
                break
            bodies.append(bytes(buf[pos : pos + self._need]))
            pos += self._need
            self._need = None
        if pos:
            del buf[:pos]
        return bodies
