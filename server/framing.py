"""LSP framing: a byte stream split into message bodies by their ``Content-Length`` headers.

An editor (or a proxy between it and us) that writes a few stray bytes once must not cost the
rest of the session. Without resynchronisation, bytes glued to the front of a header make that
header unreadable, its body is then taken for the next header, and so on: every later
message, ``shutdown`` and ``exit`` included, is misread. So the reader looks for the
``Content-Length`` field anywhere in a header block, counts and skips whatever precedes it,
and so finds the next message after any garbage that does not itself look like a header.

A header may also announce more bytes than its message has (a proxy that miscounts, a body
cut short): taken at its word, it would swallow the next message, or wait forever for bytes
that never come while the client waits for an answer. A complete header block cannot occur
inside a JSON body (JSON has no raw line breaks inside strings, and no bare words outside
them), so when one appears inside the bytes announced, the body ends where it begins.
"""

from __future__ import annotations

import json
import logging
import re

__all__ = ["MAX_BODY", "MAX_HEADER", "FrameReader", "content_length"]

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024 * 1024  # a larger announced length is refused, not buffered nor skipped
MAX_HEADER = 64 * 1024

# The field, wherever it starts: stray bytes may be glued to its front on the same line.
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([0-9]+)[ \t]*(?:\r\n|$)", re.IGNORECASE)
# A well-formed header line (RFC 7230 token, a colon, a value) as the LSP base protocol allows.
_HEADER_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:[^\r\n]*\r\n")
# A whole header block with a length, as it would start the next message inside a body.
_NEXT_HEADER = re.compile(
    rb"content-length[ \t]*:[ \t]*[0-9]+[ \t]*\r\n"
    rb"(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:[^\r\n]*\r\n)*\r\n",
    re.IGNORECASE,
)
_WAIT = -1  # "not decided yet": keep the bytes until more arrive
_TAKE = -2  # the body ends where its header said
_DIGITS = re.compile(rb"[0-9]+")
# What a next header begins with: the base protocol's two fields (any field name would also
# match where a miscounted length lands inside one, "ength: 12").
_HEADER_START = re.compile(rb"content-(?:length|type)[ \t]*:", re.IGNORECASE)
# Header lines (a Content-Type before the length) just before such a block.
_TRAILING_LINES = re.compile(rb"(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*:[^\r\n]*\r\n)+\Z")


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


def _starts_a_field(data: bytes) -> bool:
    """``data`` is the first bytes of a header field name the base protocol knows."""
    low = data.lower()
    return any(name.startswith(low) for name in (b"content-length:", b"content-type:"))


def _json_object(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), dict)
    except (ValueError, RecursionError):
        return False


class FrameReader:
    """Splits a byte stream into LSP message bodies (``Content-Length`` framing).

    Garbage between messages is skipped up to the next ``Content-Length`` field; a header
    block without a usable length is dropped; a header announcing more than ``max_body`` is
    refused and the reader resynchronises at the next header (skipping that many bytes instead
    would make a stray digit, ``Content-Length: 1000000000``, swallow every later message,
    ``shutdown`` and ``exit`` included); the body, if one was sent, is dropped as stray bytes
    on the way, never buffered whole. ``dropped`` counts header blocks given up, ``resynced``
    the times stray bytes were skipped to reach a header, ``overrun`` the bodies cut short at
    the next header: together, the bad frames seen.
    """

    def __init__(self, max_body: int = MAX_BODY) -> None:
        self._buf = bytearray()
        self._need: int | None = None
        self._max_body = max_body
        self._scanned = 0  # bytes of the pending body already searched for a next header
        self._resyncing = 0  # bytes dropped since an oversized header (0: not resyncing)
        self.dropped = 0
        self.resynced = 0
        self.overrun = 0

    @property
    def bad_frames(self) -> int:
        return self.dropped + self.resynced + self.overrun

    def _next_header(self, buf: bytearray, pos: int) -> int:
        """Where the pending body really ends, if a next message's header starts inside the
        bytes it announced; ``_TAKE``: at its announced length; ``_WAIT``: not known yet."""
        assert self._need is not None
        ends = pos + self._need  # the announced end
        end = min(len(buf), ends)
        # Back a header's length: a block may have arrived in part at the last search.
        start = pos + max(0, self._scanned - MAX_HEADER)
        self._scanned = end - pos
        # A header that starts inside the announced bytes may end past them.
        found = _NEXT_HEADER.search(buf, start, min(len(buf), ends + MAX_HEADER))
        cut = -1
        if found is not None:
            cut = found.start()
            lines = _TRAILING_LINES.search(bytes(buf[max(pos, cut - 1024) : cut]))
            if lines is not None:
                cut -= len(lines.group())  # a Content-Type line before the length
        if found is None or cut >= ends:
            if len(buf) < ends or buf[pos:end].rstrip().endswith((b"}", b"]")):
                return _TAKE  # short of the announced end yet, or ends as JSON-RPC does
            # The announced bytes end oddly: perhaps in the next header's first bytes. Wait
            # until what follows them shows it (this body is not a message either way).
            following = buf.find(b"\r\n\r\n", ends, ends + MAX_HEADER)
            if following < 0 and len(buf) - ends < MAX_HEADER:
                return _WAIT
            return _TAKE
        assert found is not None
        if len(buf) >= ends and found.end() <= ends:
            # All announced bytes are here and hold a whole header block: the length was
            # right if a header follows them (a body that merely holds header text), wrong if
            # they end mid-message.
            after = bytes(buf[ends : ends + 256])
            if not after or _HEADER_START.match(after):
                return _TAKE
            if _starts_a_field(after):
                return _WAIT  # the next bytes may yet spell a header
        elif len(buf) < ends:
            # Still short of the announced length: cut only for a whole message inside, so a
            # client waiting for an answer to it is not kept waiting for bytes it never sends.
            length = int(_DIGITS.search(found.group()).group())  # type: ignore[union-attr]
            inner = bytes(buf[found.end() : found.end() + length])
            if len(inner) < length or not _json_object(inner):
                return _TAKE
        return cut - pos

    def feed(self, chunk: bytes) -> list[bytes]:
        buf = self._buf
        buf += chunk
        pos = 0
        bodies: list[bytes] = []
        while True:
            if self._need is None:
                end = buf.find(b"\r\n\r\n", pos)
                if end < 0:
                    if len(buf) - pos > MAX_HEADER:
                        if self._resyncing:
                            self._resyncing += len(buf) - pos - 3  # the refused body: said once
                        else:
                            self.dropped += 1
                            log.warning("skipped %d bytes without a message header", len(buf) - pos)
                        pos = len(buf) - 3
                    break
                length, stray = content_length(bytes(buf[pos:end]))
                pos = end + 4
                if self._resyncing and length is not None:
                    log.warning(
                        "found the next message header %d bytes after the refused one",
                        self._resyncing - 1 + stray,
                    )
                    self._resyncing = 0
                    stray = 0
                if length is None:
                    self.dropped += 1
                    log.warning("skipped a message header without a usable Content-Length")
                    continue
                if stray:
                    self.resynced += 1
                    log.warning("skipped %d stray bytes before a message header", stray)
                if length > self._max_body:
                    self.dropped += 1
                    log.warning(
                        "refused a message header announcing %d bytes (limit %d): reading on "
                        "from the next header",
                        length,
                        self._max_body,
                    )
                    self._resyncing = 1
                    continue
                self._need = length
                self._scanned = 0
            cut = self._next_header(buf, pos)
            if cut == _WAIT:
                break
            if cut != _TAKE:
                self.overrun += 1
                log.warning(
                    "a message header announced %d bytes, but the next header came after %d",
                    self._need,
                    cut,
                )
                if cut:
                    bodies.append(bytes(buf[pos : pos + cut]))
                pos += cut
                self._need = None
                continue
            if len(buf) - pos < self._need:
                break
            bodies.append(bytes(buf[pos : pos + self._need]))
            pos += self._need
            self._need = None
        if pos:
            del buf[:pos]
        return bodies
