"""What a server feature looks like: a small object registered with the server.

The wiring (``server.app``) owns the LSP plumbing; each feature module holds one concern and
says which notifications and commands it answers. Notification handlers take the message's
``params`` as decoded JSON (unvalidated: each handler checks what it reads) and the raw body,
kept for the event log.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.app import CaptureServer

__all__ = ["CommandHandler", "Feature", "NotificationHandler"]

NotificationHandler = Callable[[Any, bytes], None]
CommandHandler = Callable[..., Awaitable[Any]]


class Feature:
    """Base of the server's features; every hook is optional."""

    def __init__(self, server: CaptureServer) -> None:
        self.server = server

    def notifications(self) -> dict[str, NotificationHandler]:
        """LSP notification methods this feature handles, straight from the wire."""
        return {}

    def commands(self) -> dict[str, CommandHandler]:
        """``workspace/executeCommand`` commands this feature answers."""
        return {}

    def start(self) -> None:
        """Called once the client sent ``initialized``."""

    def stop(self) -> None:
        """Called at shutdown, before the writer's last commit."""
