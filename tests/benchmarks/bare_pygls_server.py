"""The benchmark's peer: the smallest pygls 2.1.1 language server, a no-op didChange handler."""

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare-pygls", "1")


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    pass


if __name__ == "__main__":
    server.start_io()
