"""`capture demo`: a scripted editor session against a real `capture serve` process.

An agent edits three files; the user keeps one, rewrites part of another and undoes the third;
a test run follows. The session is driven over LSP exactly as an editor plugin would drive it,
with short checkpoint windows, then what the server recorded is read back and printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from capture.connection import connect, sqlite3
from capture.edits.positions import LineIndex
from capture.errors import CaptureError
from capture.paths import resolve_paths

WINDOWS = "500ms,1s,1500ms"
#: The file that marks a folder as the demo's own (a new demo may empty it).
DEMO_MARK = ".capture-demo"

FILES = {
    "app.py": "def total(items):\n    return 0\n\n\ndef main():\n    print(total([1, 2, 3]))\n",
    "text.py": "def slug(title):\n    return title\n",
    "config.py": "TIMEOUT = 30\nRETRIES = 3\n",
}
EDITS = {
    "app.py": (
        "    return 0\n",
        "    result = 0\n    for item in items:\n        result += item\n    return result\n",
    ),
    "text.py": (
        "    return title\n",
        '    words = title.lower().split()\n    return "-".join(words)\n',
    ),
    "config.py": ("RETRIES = 3\n", "RETRIES = 10\nBACKOFF_SECONDS = 2.5\n"),
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--home",
        type=Path,
        help="record into this CAPTURE_HOME (default: the demo folder in capture's data folder, "
        "emptied first, kept afterwards to look at)",
    )
    parser.add_argument(
        "--temporary", action="store_true", help="record into a temporary home, removed afterwards"
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="give up after this many seconds"
    )


class _Session:
    """The editor side: documents as it holds them, changes sent as incremental didChange."""

    def __init__(self, client: Any, types: Any) -> None:
        self.client = client
        self.types = types
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    def _position(self, uri: str, offset: int) -> dict[str, int]:
        line, character = LineIndex(self.texts[uri]).offset_to_position(offset)
        return {"line": line, "character": character}

    def _range(self, uri: str, start: int, end: int) -> dict[str, Any]:
        return {"start": self._position(uri, start), "end": self._position(uri, end)}

    def open(self, path: Path) -> str:
        uri = path.as_uri()
        t = self.types
        self.texts[uri] = path.read_text()
        self.versions[uri] = 1
        item = t.TextDocumentItem(uri=uri, language_id="python", version=1, text=self.texts[uri])
        self.client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=item))
        return uri

    def replace(self, uri: str, start: int, end: int, text: str) -> None:
        t = self.types
        rng = self._range(uri, start, end)
        change = t.TextDocumentContentChangePartial(
            range=t.Range(start=t.Position(**rng["start"]), end=t.Position(**rng["end"])),
            text=text,
        )
        old = self.texts[uri]
        self.texts[uri] = old[:start] + text + old[end:]
        self.versions[uri] += 1
        document = t.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        self.client.text_document_did_change(
            t.DidChangeTextDocumentParams(text_document=document, content_changes=[change])
        )

    def type(self, uri: str, offset: int, typed: str) -> None:
        for i, ch in enumerate(typed):
            self.replace(uri, offset + i, offset + i, ch)

    def agent_edit(self, uri: str, old: str, new: str, turn: str) -> None:
        start = self.texts[uri].index(old)
        self.replace(uri, start, start + len(old), new)
        self.client.protocol.notify(
            "capture/proposal",
            {
                "uri": uri,
                "range": self._range(uri, start, start + len(new)),
                "oldText": old,
                "newText": new,
                "agent": "demo-agent",
                "model": "demo-model",
                "sessionId": "demo-session",
                "turnId": turn,
                "tool": "Edit",
            },
        )

    def save(self, path: Path) -> None:
        uri = path.as_uri()
        path.write_text(self.texts[uri])
        document = self.types.TextDocumentIdentifier(uri=uri)
        self.client.text_document_did_save(self.types.DidSaveTextDocumentParams(document))


async def _drain(stream: asyncio.StreamReader | None, sink: list[bytes]) -> None:
    if stream is None:
        return
    while line := await stream.readline():
        sink.append(line)


async def _session(home: Path, project: Path, say: Any, timeout: float) -> None:
    import logging

    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    logging.getLogger("pygls").setLevel(logging.CRITICAL)

    env = dict(os.environ)
    env.update(CAPTURE_HOME=str(home), CAPTURE_WINDOWS=WINDOWS)
    client = LanguageClient("capture-demo", "1")
    await client.start_io(sys.executable, "-m", "capture", "serve", env=env)
    process = client._server
    assert process is not None
    stderr: list[bytes] = []
    drain = asyncio.create_task(_drain(process.stderr, stderr))
    try:
        await asyncio.wait_for(_script(client, project, say, timeout, types), timeout)
    except (TimeoutError, OSError, RuntimeError) as exc:
        detail = b"".join(stderr[-20:]).decode(errors="replace").strip()
        raise CaptureError(
            f"the demo session did not complete: {exc or type(exc).__name__}"
            + (f"\n{detail}" if detail else "")
        ) from exc
    finally:
        if process.returncode is None:
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
        drain.cancel()
        await client.stop()


async def _script(client: Any, project: Path, say: Any, timeout: float, types: Any) -> None:
    started = time.monotonic()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            process_id=os.getpid(),
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name=project.name)],
        )
    )
    client.initialized(types.InitializedParams())
    say(f"started [bold]capture serve[/] (pid {client._server.pid}) as an editor would")
    editor = _Session(client, types)
    uris = {name: editor.open(project / name) for name in FILES}
    for name, (old, new) in EDITS.items():
        editor.agent_edit(uris[name], old, new, turn="turn-1")
    say("the agent edited [cyan]app.py[/], [cyan]text.py[/] and [cyan]config.py[/]")
    text = uris["text.py"]
    start = editor.texts[text].index('"-".join(words)')
    editor.replace(text, start, start + len('"-".join(words)'), "")
    editor.type(text, start, '"_".join(w for w in words if w.isalnum())')
    lower = editor.texts[text].index("lower()")
    editor.replace(text, lower, lower + len("lower()"), "")
    editor.type(text, lower, "casefold()")
    say("you kept [cyan]app.py[/] and rewrote part of [cyan]text.py[/] (unsaved keystrokes)")
    config = uris["config.py"]
    old, new = EDITS["config.py"]
    start = editor.texts[config].index(new)
    editor.replace(config, start, start + len(new), old)
    client.protocol.notify(
        "capture/undo", {"uri": config, "version": editor.versions[config], "reason": "undo"}
    )
    say("you undid [cyan]config.py[/]")
    editor.save(project / "app.py")
    editor.save(project / "text.py")
    # A request is answered after everything sent before it was handled: the edits are
    # recorded before the test run starts.
    await _stats(client, types)
    run_started = time.time()
    await asyncio.sleep(0.3)  # the tests run
    client.protocol.notify(
        "capture/testRun",
        {
            "command": "pytest -q",
            "cwd": str(project),
            "startedAt": run_started,
            "durationS": round(time.time() - run_started, 3),
            "exitCode": 1,
            "passed": 11,
            "failed": 1,
            "failingIds": ["tests/test_text.py::test_slug_keeps_dashes"],
        },
    )
    say("a test run followed: [bold]pytest -q[/], 11 passed, 1 failed")
    say(f"waiting for the checkpoint windows ({WINDOWS.replace(',', ', ')})...")
    while True:
        stats = await _stats(client, types)
        if stats["proposals"] >= 3 and stats["outcomes"]["pending"] == 0:
            break
        if time.monotonic() - started > timeout:
            raise TimeoutError("the proposals did not settle")
        await asyncio.sleep(0.1)
    await client.shutdown_async(None)
    client.exit(None)
    await asyncio.wait_for(client._server.wait(), 10)


async def _stats(client: Any, types: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="capture.stats")
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


_STYLE = {"kept": "green", "edited": "yellow", "undone": "red", "rejected": "magenta"}


def _styled(outcome: str | None) -> str:
    if outcome is None:
        return "-"
    style = _STYLE.get(outcome)
    return f"[{style}]{outcome}[/]" if style else outcome


def _report(db: Path, console: Any) -> None:
    from rich.table import Table

    from capture.store.summary_rows import recorded_proposals, recorded_runs

    conn = connect(db, timeout=5.0)
    conn.row_factory = sqlite3.Row
    try:
        windows, proposals = recorded_proposals(conn)
        table = Table(title="What the server recorded", title_justify="left")
        table.add_column("file")
        table.add_column("outcome")
        table.add_column("similarity", justify="right")
        table.add_column("retention", justify="right")
        for window in windows:
            table.add_column(f"at {window}")
        for p, seen in proposals:
            table.add_row(
                p["path"],
                _styled(p["outcome"]),
                _pct(p["similarity"]),
                _pct(p["retention"]),
                *(_styled(seen.get(w)) for w in windows),
            )
        console.print(table)
        runs = Table(title="Test runs", title_justify="left")
        for column in ("command", "exit", "passed", "failed", "failing", "episodes"):
            runs.add_column(column)
        for r, linked in recorded_runs(conn):
            failing = r["failing_ids"] or "[]"
            runs.add_row(
                r["command"],
                str(r["exit_code"]),
                str(r["passed"]),
                str(r["failed"]),
                failing.strip("[]").replace('"', ""),
                str(linked),
            )
        console.print(runs)
    finally:
        conn.close()


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console()
    temporary = args.temporary
    if temporary:
        home = Path(tempfile.mkdtemp(prefix="capture-demo-"))
    elif args.home is not None:
        home = args.home.resolve()
    else:
        # a home of its own, beside (never in) the user's database: the demo's made-up edits
        # stay out of their statistics; a second demo starts from an empty one
        home = resolve_paths().data_dir / "demo"
        if (home / DEMO_MARK).exists():
            shutil.rmtree(home, ignore_errors=True)
    project = home / "demo-project"
    try:
        project.mkdir(parents=True, exist_ok=True)
        (home / DEMO_MARK).write_text("made by capture demo; a new demo empties this folder\n")
        subprocess.run(["git", "init", "-q", str(project)], check=False, capture_output=True)
        for name, text in FILES.items():
            (project / name).write_text(text)

        def say(message: str) -> None:
            console.print(f"[dim]›[/] {message}")

        console.print(f"[bold]agent-capture demo[/]  (CAPTURE_HOME={home})")
        asyncio.run(_session(home, project, say, args.timeout))
        console.print()
        _report(resolve_paths({"CAPTURE_HOME": str(home)}).db, console)
        if temporary:
            console.print("[dim]The demo's home was temporary and is removed.[/]")
        else:
            console.print(
                f"The demo's data stays in {home} (apart from yours). Look further:\n"
                f"  CAPTURE_HOME={shlex.quote(str(home))} capture episodes\n"
                f"  CAPTURE_HOME={shlex.quote(str(home))} capture report --all --today"
            )
    finally:
        if temporary:
            shutil.rmtree(home, ignore_errors=True)
    return 0
