"""Driving a real `capture serve` process as an LSP client (pytest-lsp's client over a pipe),
and reading what it recorded."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient
from pytest_lsp.client import make_test_lsp_client

from capture.connection import sqlite3
from capture.edits.positions import LineIndex, PositionEncoding
from capture.edits.regions import Edit
from tests.conftest import capture_env

SERVER = [sys.executable, "-m", "capture", "serve"]


def db_path(home: Path) -> Path:
    return home / "data" / "capture.db"


def query(home: Path, sql: str, *params: object) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db_path(home), timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


async def wait_for(predicate: Any, timeout: float = 15.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def proposals(home: Path) -> list[sqlite3.Row]:
    try:
        return query(home, "SELECT * FROM proposals ORDER BY created_at")
    except sqlite3.OperationalError:  # not created yet
        return []


async def settled(home: Path, count: int, timeout: float = 15.0) -> dict[str, sqlite3.Row]:
    """Wait until ``count`` proposals have their final outcome; returns them by file."""

    def done() -> dict[str, sqlite3.Row] | None:
        rows = proposals(home)
        if len(rows) >= count and all(r["settled_at"] is not None for r in rows):
            return {r["path"]: r for r in rows}
        return None

    return await wait_for(done, timeout, f"{count} settled proposals")


class Editor:
    """One client session: documents as the client sees them, changes sent incrementally."""

    def __init__(self, client: LanguageClient, encoding: PositionEncoding) -> None:
        self.client = client
        self.encoding = encoding
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self._index: dict[str, LineIndex] = {}

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        if text is None:
            with path.open(newline="") as fh:  # the file's own line ends, CRLF included
                text = fh.read()
        self.texts[uri] = text
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return uri

    def position(self, uri: str, offset: int) -> types.Position:
        index = self._index.get(uri)
        if index is None:
            index = self._index[uri] = LineIndex(self.texts[uri])
        line, character = index.offset_to_position(offset, self.encoding)
        return types.Position(line=line, character=character)

    def range(self, uri: str, start: int, end: int) -> types.Range:
        return types.Range(start=self.position(uri, start), end=self.position(uri, end))

    def replace(self, uri: str, start: int, end: int, new_text: str) -> None:
        """Replace text[start:end] (code points) and tell the server, as a typing editor does."""
        change = types.TextDocumentContentChangePartial(
            range=self.range(uri, start, end), text=new_text
        )
        text = self.texts[uri]
        self.texts[uri] = text[:start] + new_text + text[end:]
        if uri in self._index:
            self._index[uri].update(Edit(start, end, new_text))
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[change],
            )
        )

    def type(self, uri: str, offset: int, typed: str) -> None:
        """One keystroke (one didChange) per character."""
        for i, ch in enumerate(typed):
            self.replace(uri, offset + i, offset + i, ch)

    def agent_edit(self, uri: str, old_text: str, new_text: str, **fields: Any) -> int:
        """The agent's edit lands in the buffer, then the plugin reports it."""
        start = self.texts[uri].index(old_text)
        self.replace(uri, start, start + len(old_text), new_text)
        params = {
            "uri": uri,
            "range": _range_json(self.range(uri, start, start + len(new_text))),
            "oldText": old_text,
            "newText": new_text,
            "agent": "test-agent",
            "model": "test-model",
            **fields,
        }
        self.client.protocol.notify("capture/proposal", params)
        return start

    def save(self, path: Path) -> None:
        uri = path.as_uri()
        path.write_text(self.texts[uri], newline="")
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

    def close(self, path: Path) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=path.as_uri()))
        )

    async def stats(self) -> dict[str, Any]:
        result = await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="capture.stats")
        )
        return result  # type: ignore[no-any-return]


def _range_json(rng: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


@asynccontextmanager
async def session(
    home: Path,
    root: Path,
    encodings: list[str] | None = None,
    **env: str,
) -> AsyncIterator[Editor]:
    """A `capture serve` process and an initialized client talking to it over a pipe."""
    client = make_test_lsp_client()
    await client.start_io(*SERVER, env=capture_env(home, **env))
    general = None
    if encodings is not None:
        general = types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind(e) for e in encodings]
        )
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(general=general),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
    encoding = PositionEncoding(str(result.capabilities.position_encoding or "utf-16"))
    editor = Editor(client, encoding)
    try:
        yield editor
        assert not client.messages, f"the server showed messages: {client.messages}"
        await client.shutdown_session()
    finally:
        await stop(client)


async def stop(client: LanguageClient) -> None:
    """End the session even when a test failed half-way: end of input, then a kill."""
    process = client._server
    if process is not None and process.returncode is None:
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
    await client.stop()
