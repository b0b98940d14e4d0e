"""What a server feature is, and what it is given: the services every feature shares.

The server (``server.app``) owns the LSP plumbing and knows features only through this base;
the composition root (``server.main``) builds each feature with the services and the other
features it uses, and registers them in order. A feature never imports the server.

A feature says which notifications and commands it answers, and overrides the hooks it needs:
the lifecycle (``serving``, ``initialized``, ``stop``), its part of the server's diagnostics,
and the events other features raise through :class:`Events` (an open document changed, a
file's proposals are to be followed on disk, a checkpoint falls due). An event reaches the
features that override its hook, in registration order, synchronously: the one raising it
gets their exceptions as it would from a direct call.

Notification handlers take the message's ``params`` as decoded JSON (unvalidated: each handler
checks what it reads) and the raw body, kept for the event log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from capture.config import Config
from capture.edits.positions import PositionEncoding
from server.document import Document
from server.workspaces import inside
from server.writer import StoreWriter

__all__ = ["CommandHandler", "Context", "Events", "Feature", "NotificationHandler"]

log = logging.getLogger(__name__)

NotificationHandler = Callable[[Any, bytes], None]
CommandHandler = Callable[..., Awaitable[Any]]


class Feature:
    """Base of the server's features; every hook is optional."""

    def __init__(self, context: Context) -> None:
        self.context = context

    # ------------------------------------------------------------------ what it answers

    def notifications(self) -> dict[str, NotificationHandler]:
        """LSP notification methods this feature handles, straight from the wire."""
        return {}

    def commands(self) -> dict[str, CommandHandler]:
        """``workspace/executeCommand`` commands this feature answers."""
        return {}

    # ------------------------------------------------------------------ lifecycle

    def serving(self) -> None:
        """The loop runs and the writer took its first job (before ``initialize``: a
        restarted server resumes at once)."""

    def initialized(self) -> None:
        """The client sent ``initialized``: the workspace folders are known."""

    async def stop(self) -> None:
        """At shutdown, in registration order, before the writer's last commit."""

    def diagnostics(self) -> dict[str, Any]:
        """This feature's figures in ``capture.stats``'s ``server`` part."""
        return {}

    # ------------------------------------------------------------------ events

    def document_opened(self, doc: Document) -> None:
        """The editor opened ``doc``."""

    def document_changed(self, doc: Document, touched: list[int], raw: bytes) -> None:
        """A change moved regions of ``doc`` (``touched``: the keys it touched); ``raw`` is the
        change message as received."""

    def document_saved(self, doc: Document, now: float) -> None:
        """The editor saved ``doc``."""

    def document_closed(self, doc: Document) -> None:
        """The editor closed ``doc`` (or reopened its URI)."""

    def file_followed(self, file: str) -> None:
        """One more live proposal of ``file`` is followed (on disk while no editor holds it)."""

    def file_unfollowed(self, file: str) -> None:
        """One live proposal of ``file`` is no longer followed."""

    def checkpoint_due(self, due_at: float) -> None:
        """A checkpoint falls due at ``due_at``."""


_EVENTS = (
    "document_opened",
    "document_changed",
    "document_saved",
    "document_closed",
    "file_followed",
    "file_unfollowed",
    "checkpoint_due",
)


class Events:
    """The features' events: each call reaches the registered features that override its hook.

    Each event keeps the list of its hooks, so a document change (one per keystroke) costs a
    call per listener and nothing for the features that do not listen."""

    def __init__(self) -> None:
        self._document_opened: list[Callable[[Document], None]] = []
        self._document_changed: list[Callable[[Document, list[int], bytes], None]] = []
        self._document_saved: list[Callable[[Document, float], None]] = []
        self._document_closed: list[Callable[[Document], None]] = []
        self._file_followed: list[Callable[[str], None]] = []
        self._file_unfollowed: list[Callable[[str], None]] = []
        self._checkpoint_due: list[Callable[[float], None]] = []

    def register(self, feature: Feature) -> None:
        for name in _EVENTS:
            if getattr(type(feature), name) is not getattr(Feature, name):
                getattr(self, f"_{name}").append(getattr(feature, name))

    def document_opened(self, doc: Document) -> None:
        for hook in self._document_opened:
            hook(doc)

    def document_changed(self, doc: Document, touched: list[int], raw: bytes) -> None:
        for hook in self._document_changed:
            hook(doc, touched, raw)

    def document_saved(self, doc: Document, now: float) -> None:
        for hook in self._document_saved:
            hook(doc, now)

    def document_closed(self, doc: Document) -> None:
        for hook in self._document_closed:
            hook(doc)

    def file_followed(self, file: str) -> None:
        for hook in self._file_followed:
            hook(file)

    def file_unfollowed(self, file: str) -> None:
        for hook in self._file_unfollowed:
            hook(file)

    def checkpoint_due(self, due_at: float) -> None:
        for hook in self._checkpoint_due:
            hook(due_at)


class Context:
    """What the features share: the configuration, the writer thread, the loop, the events,
    and what the client told in ``initialize`` (position encoding, workspace folders, whether
    paths outside them are allowed)."""

    def __init__(self, config: Config, writer: StoreWriter) -> None:
        self.config = config
        self.writer = writer
        self.events = Events()
        self.loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]  # set at start
        self.encoding = PositionEncoding.UTF16
        self.folders: list[str] = []
        # Off by default: an agent edit named by URI must not copy any file of the machine
        # into the store. The editor opts in with initializationOptions.allowOutsideWorkspace.
        self.allow_outside = False
        self.refused_outside = 0

    def refuse_outside(self, path: str, what: str) -> bool:
        """True (and one logged line) when ``path`` is outside the workspace folders and
        such paths are not allowed."""
        if self.allow_outside or inside(path, self.folders):
            return False
        self.refused_outside += 1
        log.warning("%s refused: %s is outside the workspace folders", what, path[:300])
        return True
