"""A user typing in an editor that sends one change per keystroke (as VS Code does), for the
corpus scenarios whose label depends on how keystrokes move a region.

The editor is a real `capture serve` process over stdio, sharing the world's store: it picks up
the proposals the hook recorded, follows every keystroke through its regions, and writes them
back when the file is saved and closed. The world's clock does not reach it: its checkpoints
stay the world's to observe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.outcome_corpus.world import World
from tests.support.rawlsp import RawClient, change

__all__ = ["Buffer", "in_editor"]


class Buffer:
    """One open document: its text as the editor holds it, changed a key at a time."""

    def __init__(self, client: RawClient, path: Path) -> None:
        self._client = client
        self._path = path
        with path.open(encoding="utf-8", newline="") as fh:
            self.text = fh.read()
        self.uri = client.open(path, self.text)
        self._version = 1
        client.stats()  # answered after the open document's proposals were adopted

    def _position(self, offset: int) -> tuple[int, int]:
        before = self.text[:offset]  # the corpus's files are ASCII: code points are UTF-16 units
        return before.count("\n"), offset - (before.rfind("\n") + 1)

    def replace(self, start: int, end: int, text: str) -> None:
        """One change: ``text[start:end]`` replaced, as the editor reports a keystroke."""
        self._version += 1
        self._client.send(
            change(self.uri, self._version, self._position(start), self._position(end), text)
        )
        self.text = self.text[:start] + text + self.text[end:]

    def select_and_type(self, start: int, end: int, keys: str) -> None:
        """Select ``text[start:end]`` and type ``keys`` over it: the first key replaces the
        selection, each later one is inserted where the typing is."""
        self.replace(start, end, keys[0])
        for i, key in enumerate(keys[1:], start + 1):
            self.replace(i, i, key)

    def type_at(self, offset: int, keys: str) -> None:
        """Put the cursor at ``offset`` and type ``keys``, one change per key."""
        for i, key in enumerate(keys, offset):
            self.replace(i, i, key)

    def save(self) -> None:
        with self._path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(self.text)
        self._client.notify("textDocument/didSave", {"textDocument": {"uri": self.uri}})


@contextmanager
def in_editor(world: World, relative: str) -> Iterator[Buffer]:
    """``relative`` open in an editor session from the block's start to its end; the file is
    saved and closed, and the editor gone, when the block ends."""
    # The world's windows (the defaults), not the tests' short ones.
    client = RawClient(world.home, HOME=str(world.home), CAPTURE_WINDOWS="30s,2m,10m")
    try:
        client.initialize(world.root)
        buffer = Buffer(client, world.path(relative))
        yield buffer
        buffer.save()
        client.notify("textDocument/didClose", {"textDocument": {"uri": buffer.uri}})
        client.stats()  # the regions written before the session ends
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.kill()
