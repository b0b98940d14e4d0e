"""The mirror of the editor's open documents, and the per-keystroke path.

``textDocument/didChange`` is the one message an editor sends per keystroke, so its handler
reads the decoded JSON directly (no model objects), applies each change to the document's
:class:`~server.buffer.TextBuffer` and moves the document's tracked regions through it.
Keystrokes in documents without a live proposal are not recorded; in the others, each
change message is appended to the event log as received (by the proposals feature, which hears
of every open, change, save and close as an event: this one knows no other feature).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pygls.uris import to_fs_path

from capture.edits.regions import Edit
from capture.edits.textdiff import diff_edits
from server.buffer import TextBuffer
from server.document import Document
from server.feature import Context, Feature, NotificationHandler
from server.params import ParamsError
from server.surrogates import has_surrogates

__all__ = ["BadParams", "Documents"]

log = logging.getLogger(__name__)

#: Multi-line replacements at least this long are diffed before regions move through them.
REFINE_AT = 16


class BadParams(ParamsError):
    """A text synchronization message whose fields do not have the LSP's types."""


def _int(value: Any, name: str) -> int:
    if type(value) is not int:
        raise BadParams(f"{name} must be an integer")
    return value


def _validate_changes(changes: Any) -> list[tuple[tuple[int, int, int, int] | None, str]]:
    if not isinstance(changes, list):
        raise BadParams("contentChanges must be a list")
    out: list[tuple[tuple[int, int, int, int] | None, str]] = []
    for change in changes:
        if not isinstance(change, dict):
            raise BadParams("a content change must be an object")
        text = change.get("text")
        if not isinstance(text, str):
            raise BadParams("a content change needs a text string")
        rng = change.get("range")
        if rng is None:
            out.append((None, text))
            continue
        try:
            start, end = rng["start"], rng["end"]
            out.append(
                (
                    (
                        _int(start["line"], "line"),
                        _int(start["character"], "character"),
                        _int(end["line"], "line"),
                        _int(end["character"], "character"),
                    ),
                    text,
                )
            )
        except (KeyError, TypeError):
            raise BadParams("a range needs start and end positions") from None
    return out


def _text_document(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict) or not isinstance(params.get("textDocument"), dict):
        raise BadParams("params.textDocument is missing")
    doc = params["textDocument"]
    if not isinstance(doc.get("uri"), str):
        raise BadParams("textDocument.uri must be a string")
    if has_surrogates(doc["uri"]):
        raise BadParams("textDocument.uri holds a lone surrogate")  # no file has such a name
    return doc


class Documents(Feature):
    """Open documents by URI (and by resolved file path once known)."""

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.events = context.events
        self.by_uri: dict[str, Document] = {}
        self.by_file: dict[str, Document] = {}
        self.changes = 0

    def notifications(self) -> dict[str, NotificationHandler]:
        return {
            "textDocument/didOpen": self.did_open,
            "textDocument/didChange": self.did_change,
            "textDocument/didClose": self.did_close,
            "textDocument/didSave": self.did_save,
        }

    def get(self, uri: str | None) -> Document | None:
        return None if uri is None else self.by_uri.get(uri)

    # ------------------------------------------------------------------ handlers

    def did_open(self, params: Any, raw: bytes) -> None:
        item = _text_document(params)
        text = item.get("text")
        if not isinstance(text, str):
            raise BadParams("textDocument.text must be a string")
        version = item.get("version")
        uri = item["uri"]
        if uri in self.by_uri:
            self._forget(self.by_uri[uri])
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        doc = Document(uri, fs_path, version if type(version) is int else None, TextBuffer(text))
        self.by_uri[uri] = doc
        self.events.document_opened(doc)

    def did_change(self, params: Any, raw: bytes) -> None:
        item = _text_document(params)
        doc = self.by_uri.get(item["uri"])
        if doc is None:
            log.warning("didChange for a document that is not open: %s", item["uri"][:200])
            return
        changes = _validate_changes(params.get("contentChanges"))
        buffer = doc.buffer
        regions = doc.regions
        encoding = self.context.encoding
        touched: list[int] = []
        for rng, text in changes:
            if rng is None:
                for edit in reversed(buffer.replace(text)):
                    if len(regions):
                        touched.extend(regions.apply(edit))
                continue
            if not len(regions):
                buffer.change(rng[0], rng[1], rng[2], rng[3], text, encoding)
                continue
            if rng[0] == rng[2] or len(text) < REFINE_AT:
                touched.extend(regions.apply(buffer.change(*rng, text, encoding)))
                continue
            # A coarse replacement (a reload, a formatter) would swallow every region it
            # covers: move regions through the characters that really changed instead.
            start = buffer.position_to_offset(rng[0], rng[1], encoding)
            end = buffer.position_to_offset(rng[2], rng[3], encoding)
            old = buffer.slice(min(start, end), max(start, end))
            edit = buffer.change(*rng, text, encoding)
            for part in reversed(diff_edits(old, text)):
                moved = Edit(edit.start + part.start, edit.start + part.end, part.text)
                touched.extend(regions.apply(moved))
        version = item.get("version")
        doc.version = version if type(version) is int else None
        doc.changes += 1
        self.changes += 1
        if len(regions):
            self.events.document_changed(doc, touched, raw)

    def did_close(self, params: Any, raw: bytes) -> None:
        item = _text_document(params)
        doc = self.by_uri.get(item["uri"])
        if doc is None:
            return
        self._forget(doc)

    def did_save(self, params: Any, raw: bytes) -> None:
        item = _text_document(params)
        doc = self.by_uri.get(item["uri"])
        if doc is None:
            return
        text = params.get("text")
        if isinstance(text, str) and text != doc.buffer.text:
            # The client sent the saved text and it disagrees with the mirror: trust the save.
            log.warning("saved text differs from the mirror of %s; resynchronising", doc.uri)
            for edit in reversed(doc.buffer.replace(text)):
                doc.regions.apply(edit)
        self.events.document_saved(doc, time.time())

    # ------------------------------------------------------------------ helpers

    def _forget(self, doc: Document) -> None:
        del self.by_uri[doc.uri]
        if doc.file is not None and self.by_file.get(doc.file) is doc:
            del self.by_file[doc.file]
        self.events.document_closed(doc)

    def resolved(self, doc: Document, file: str) -> bool:
        """Record where ``doc`` lives on disk; False if it was closed meanwhile."""
        if self.by_uri.get(doc.uri) is not doc:
            return False
        doc.file = file
        self.by_file[file] = doc
        return True
