"""Must hold: with sync disabled (the default), the command line, the hook commands, the server
and `capture demo` connect to no address, and neither does the test suite.

How it is shown: every command runs as a real process with a guard on socket connect and on
name lookups (tests/netguard/sitecustomize.py, on PYTHONPATH) that records every attempt and
refuses all of them; and a listening sentinel socket on loopback is made the most tempting target
there is: sync was enabled towards it (then disabled), and it is the HTTP(S) proxy in the
environment. The guard's log must stay empty and the sentinel must see no connection. Two
controls show the guard and the sentinel do notice a real attempt.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from capture.cli import COMMANDS
from tests.conftest import FORMATS, NETWORK_GUARD, capture_env


class Sentinel:
    """A listening socket that counts who connects to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def sentinel() -> Sentinel:
    s = Sentinel()
    yield s
    s.close()


class Guarded:
    """Runs `capture` as a guarded process in one home, with sync pointed at the sentinel and
    then disabled."""

    def __init__(self, tmp: Path, sentinel: Sentinel, mode: str = "deny-all") -> None:
        self.home = tmp / "home"
        self.ws = tmp / "ws"
        self.ws.mkdir()
        subprocess.run(["git", "init", "-q", str(self.ws)], check=True)
        self.log = tmp / "network.log"
        self.env = capture_env(
            self.home,
            CAPTURE_NETGUARD=mode,
            CAPTURE_NETGUARD_LOG=str(self.log),
            HTTP_PROXY=sentinel.url,
            HTTPS_PROXY=sentinel.url,
            ALL_PROXY=sentinel.url,
            http_proxy=sentinel.url,
            https_proxy=sentinel.url,
        )
        self.env.pop("NO_PROXY", None)
        self.env.pop("no_proxy", None)

    def run(
        self, *args: str, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "capture", *args],
            input=input,
            env=self.env,
            cwd=self.ws,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def attempts(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def _prepare(g: Guarded, sentinel: Sentinel) -> None:
    assert g.run("sync", "enable", "--url", sentinel.url, "--token", "t").returncode == 0
    assert g.run("sync", "disable").returncode == 0


def test_cli_connects_nowhere_with_sync_disabled(tmp_path: Path, sentinel: Sentinel) -> None:
    g = Guarded(tmp_path, sentinel)
    _prepare(g, sentinel)
    (g.ws / "app.py").write_text("def f():\n    return 1\n")
    body = {"file": "app.py", "old_text": "    return 0\n", "new_text": "    return 1\n",
            "agent": "claude-code", "session_id": "s", "turn_id": "t"}  # fmt: skip
    proposed = g.run("propose", "--json", input=json.dumps(body))
    assert proposed.returncode == 0, proposed.stderr
    episode_id = json.loads(proposed.stdout)["episode"]
    results = [
        g.run("observe"),
        g.run("episodes"),
        g.run("episodes", "--json"),
        g.run("show", episode_id),
        g.run("doctor"),
        g.run("sync", "status"),
        g.run("sync", "preview"),
        g.run("sync", "preview", "--json", episode_id),
    ]
    assert [r.returncode for r in results] == [0] * len(results), [r.stderr for r in results]
    refused = g.run("sync", "now")
    assert refused.returncode == 1 and "sync is not enabled" in refused.stderr
    assert g.attempts() == []
    assert sentinel.connections == 0


_HOOK_AGENTS = {"claude_code": "claude-code", "codex": "codex", "copilot": "copilot",
                "cursor": "cursor", "gemini": "gemini"}  # fmt: skip


@pytest.mark.skipif("hook" not in COMMANDS, reason="`capture hook` is not in this tree yet")
def test_hook_commands_connect_nowhere(tmp_path: Path, sentinel: Sentinel) -> None:
    g = Guarded(tmp_path, sentinel)
    _prepare(g, sentinel)
    ran = 0
    for example in sorted((FORMATS / "examples").glob("*.json")):
        prefix = next((p for p in _HOOK_AGENTS if example.name.startswith(p + "_")), None)
        if prefix is None or "config" in example.name or "settings" in example.name:
            continue
        payload = (
            example.read_text()
            .replace("/Users/", str(g.ws) + "/")
            .replace("/home/", str(g.ws) + "/")
        )
        result = g.run("hook", _HOOK_AGENTS[prefix], input=payload)
        assert result.returncode == 0, (example.name, result.stderr)
        ran += 1
    assert ran >= 10
    assert g.attempts() == []
    assert sentinel.connections == 0


def _lsp(message: dict) -> bytes:
    data = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def _read_response(stream: object, want_id: int, deadline: float) -> dict:
    """Read framed LSP messages until the response with `want_id`."""
    import time

    while time.monotonic() < deadline:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = stream.read(1)  # type: ignore[attr-defined]
            if not byte:
                raise AssertionError("the server closed its output")
            header += byte
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        message = json.loads(stream.read(length))  # type: ignore[attr-defined]
        if message.get("id") == want_id and "method" not in message:
            return dict(message)
    raise AssertionError(f"no response {want_id}")


@pytest.mark.skipif("serve" not in COMMANDS, reason="`capture serve` is not in this tree yet")
def test_server_connects_nowhere(tmp_path: Path, sentinel: Sentinel) -> None:
    import time

    g = Guarded(tmp_path, sentinel)
    _prepare(g, sentinel)
    uri = g.ws.as_uri()
    proc = subprocess.Popen(
        [sys.executable, "-m", "capture", "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=g.env, cwd=g.ws,
    )  # fmt: skip
    assert proc.stdin and proc.stdout
    deadline = time.monotonic() + 60
    try:
        proc.stdin.write(
            _lsp(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": uri,
                        "capabilities": {},
                        "workspaceFolders": [{"uri": uri, "name": "ws"}],
                    },
                }
            )
        )
        proc.stdin.flush()
        assert "capabilities" in _read_response(proc.stdout, 1, deadline)["result"]
        for message in (
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": f"{uri}/a.py",
                        "languageId": "python",
                        "version": 1,
                        "text": "x = 1\n",
                    }
                },
            },
            {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        ):
            proc.stdin.write(_lsp(message))
        proc.stdin.flush()
        _read_response(proc.stdout, 2, deadline)
        proc.stdin.write(_lsp({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert g.attempts() == []
    assert sentinel.connections == 0


@pytest.mark.skipif("demo" not in COMMANDS, reason="`capture demo` is not in this tree yet")
def test_demo_connects_nowhere(tmp_path: Path, sentinel: Sentinel) -> None:
    g = Guarded(tmp_path, sentinel)
    result = g.run("demo", timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    # The demo may talk to the server it starts on loopback; never to anything else.
    others = [a for a in g.attempts() if a["host"] not in ("127.0.0.1", "::1", "localhost")]
    assert others == []
    assert all(a["port"] != sentinel.port for a in g.attempts())
    assert sentinel.connections == 0


def test_controls_the_guard_and_the_sentinel_see_a_real_attempt(
    tmp_path: Path, sentinel: Sentinel
) -> None:
    g = Guarded(tmp_path, sentinel)
    probe = subprocess.run(
        [sys.executable, "-c",
         f"import socket; socket.create_connection(('127.0.0.1', {sentinel.port}), timeout=2)"],
        env=g.env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert probe.returncode != 0 and "network guard" in probe.stderr
    assert [(a["event"], a["port"], a["refused"]) for a in g.attempts()] == [
        ("connect", sentinel.port, True)
    ]
    # With sync enabled, the uploader does connect: the sentinel notices.
    (tmp_path / "enabled").mkdir()
    loose = Guarded(tmp_path / "enabled", sentinel, mode="deny-remote")
    (loose.ws / "a.py").write_text("x = 1\n")
    rejected = {"file": "a.py", "old_text": "x = 1\n", "new_text": "x = 2\n", "state": "rejected"}
    assert loose.run("propose", input=json.dumps(rejected)).returncode == 0  # settled at once
    loose.run("sync", "enable", "--url", sentinel.url, "--token", "t")
    sent = loose.run("sync", "now", "--timeout", "2")
    assert sent.returncode == 1
    assert sentinel.connections >= 1
    assert any(a["port"] == sentinel.port for a in loose.attempts())


def test_this_process_is_guarded_too() -> None:
    guard = NETWORK_GUARD
    assert socket.socket.connect is guard.connect  # type: ignore[attr-defined]
    called: list[object] = []
    original = guard._connect  # type: ignore[attr-defined]
    guard._connect = lambda sock, address: called.append(address)  # type: ignore[attr-defined]
    try:
        with socket.socket() as s, pytest.raises(PermissionError, match="network guard"):
            s.connect(("192.0.2.1", 9))  # TEST-NET-1; refused before any packet could leave
        with pytest.raises(PermissionError):
            socket.getaddrinfo("example.com", 443)
    finally:
        guard._connect = original  # type: ignore[attr-defined]
    assert called == []


# -- the labelled secrets corpus against a real collector, on SQLite and on PostgreSQL ---------


def _pg_dump(cluster: object, db: str) -> bytes:
    """Every row of the collector's PostgreSQL database as text (pg_dump reads the rows
    decompressed: TOAST compression would hide a secret from a search of the data files)."""
    from tests.support.collector_support import pg_bindir

    dump = subprocess.run(
        [str(pg_bindir() / "pg_dump"), "--data-only", db],
        capture_output=True, check=True, timeout=120,
    )  # fmt: skip
    return dump.stdout


@pytest.fixture(params=["sqlite", "postgresql"])
def corpus_collector(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from tests.conftest import missing_tool
    from tests.support.collector_support import Collector, PgCluster, PostgresMissing, make_token

    cluster = None
    if request.param == "sqlite":
        db = f"sqlite:///{tmp_path / 'collector.db'}"
    else:
        try:
            import psycopg  # noqa: F401

            cluster = PgCluster().start()
        except (ImportError, PostgresMissing) as exc:
            missing_tool(f"PostgreSQL for the collector: {exc}")
        assert cluster is not None
        db = cluster.create_database("corpus")
    collector = Collector(db, tmp_path / "collector-home", ("--rate", "10000", "--burst", "10000"))
    collector.start()
    token = make_token(db, "t", "ingest")

    def stored() -> bytes:
        if cluster is None:
            return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("collector.db*")))
        return _pg_dump(cluster, db)

    try:
        yield collector.url, token, stored
    finally:
        collector.stop()
        if cluster is not None:
            cluster.stop()


def test_no_corpus_secret_reaches_the_collector_at_the_redacted_level(
    tmp_path: Path, corpus_collector: tuple[str, str, object]
) -> None:
    from tests.support.secrets.labelled_corpus import make_corpus
    from tests.support.sync_e2e import Home

    url, token, stored = corpus_collector
    home = Home(tmp_path)
    episodes, labelled = make_corpus(root=str(home.ws))
    assert len(labelled) >= 300 and len({x.kind for x in labelled}) >= 40
    home.fill(episodes)
    home.enable(url, token, level="redacted")
    home.run("sync", "now")
    status = home.status()
    data = stored()  # type: ignore[operator]
    print(f"sent {status['sent']}, quarantined {status['quarantined']} of {len(episodes)}")
    assert status["sent"] > len(episodes) // 2
    # The stored bytes do hold the episodes (so that finding no secret in them means something):
    # a placeholder for each secret outside a path (a path's directories are hashed instead),
    # less those of episodes not sent (at most three secrets each).
    in_text = sum(1 for x in labelled if x.place != "path")
    assert data.count(b"<SECRET:") >= in_text - 3 * (len(episodes) - status["sent"])
    leaks = sorted({(x.kind, x.place) for x in labelled for p in x.probes if p.encode() in data})
    assert leaks == []


def test_metrics_level_carries_no_code_and_no_prose(
    tmp_path: Path, corpus_collector: tuple[str, str, object]
) -> None:
    from tests.support.secrets.labelled_corpus import make_corpus
    from tests.support.sync_e2e import Home

    url, token, stored = corpus_collector
    home = Home(tmp_path)
    episodes, labelled = make_corpus(seed=18, per_kind=1, root=str(home.ws))
    home.fill(episodes)
    home.enable(url, token, level="metrics")
    home.run("sync", "now")
    data = stored()  # type: ignore[operator]
    fragments: set[str] = {p for x in labelled for p in x.probes}
    for e in episodes:
        fragments.update(line.strip() for line in (e["prompt"] or "").splitlines())
        for p in e["proposals"]:
            for h in p["hunks"]:
                fragments.update(line.strip() for line in h["new_text"].splitlines())
        for r in e["test_runs"]:
            fragments.update([r["command"], *r["failing_ids"]])
    fragments = {f for f in fragments if len(f) >= 12}
    assert len(fragments) > 500
    assert data.count(b"agent-capture/episode") + data.count(b"metrics") > 0
    assert sorted(f for f in fragments if f.encode() in data) == []
