"""`capture otlp` as a real process, fed by the real OpenTelemetry SDK through its OTLP/HTTP
exporters (protobuf and JSON), with the edits announced through the real `capture hook
claude-code`: a user's rejection in Claude Code's dialog (which no hook reports) is recorded
as `rejected` by `user_reject`; an accept by configuration leaves an applied edit marked as not
decided by a person; no identity attribute reaches the database; bad requests get 4xx and the
receiver keeps serving, on loopback unless told otherwise."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.json.http._log_exporter import OTLPLogExporter as JsonExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import (
    OTLPLogExporter as ProtobufExporter,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from tests.conftest import RunCapture, capture_env, episodes_json
from tests.support.hook_support import hook, no_agent_env  # noqa: F401 - autouse fixture

EMAIL = "dana.reviewer@example.org"
ACCOUNT = "7d1f0b8e-2a41-4c7e-9d55-0e6c3b1a9f20"
SESSION = "5c0f9e2a-1b3d-4e6f-8a7b-9c0d1e2f3a4b"
EXPORTERS = {"protobuf": ProtobufExporter, "json": JsonExporter}


class Receiver:
    def __init__(self, proc: subprocess.Popen[str], host: str, port: int) -> None:
        self.proc, self.host, self.port = proc, host, port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def post(
        self, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request("POST", path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


@pytest.fixture
def receiver(capture_home: Path) -> Iterator[Receiver]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "capture", "otlp", "--port", "0", "--max-body", "262144"],
        env=capture_env(capture_home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    match = re.search(r"http://([\d.]+):(\d+)", line)
    assert match, line
    try:
        yield Receiver(proc, match.group(1), int(match.group(2)))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def send_events(receiver: Receiver, encoding: str, events: list[dict[str, Any]]) -> None:
    """Claude Code's events as its exporter sends them: one log record each, named by its
    body and `event.name`, with the identity attributes on the resource and on the record."""
    resource = Resource.create(
        {"service.name": "claude-code", "user.email": EMAIL, "organization.id": ACCOUNT}
    )
    provider = LoggerProvider(resource=resource)
    exporter = EXPORTERS[encoding](endpoint=f"{receiver.url}/v1/logs")
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger("com.anthropic.claude_code.events")
    for attributes in events:
        name = attributes["event.name"]
        logger.emit(
            body=f"claude_code.{name}",
            attributes={
                "session.id": SESSION,
                "user.email": EMAIL,
                "user.account_uuid": ACCOUNT,
                "terminal.type": "xterm-256color",
                **attributes,
            },
        )
    provider.force_flush()
    provider.shutdown()


def wait_for(predicate: Any, what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    target = ws / "cart.py"
    target.write_text("def total(items):\n    return sum(items)\n")
    return ws, target


def hook_call(
    run_capture: RunCapture, ws: Path, event: str, call_id: str, target: Path, **more: Any
) -> None:
    payload = {
        "session_id": SESSION,
        "transcript_path": str(ws.parent / f"{SESSION}.jsonl"),
        "cwd": str(ws),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Edit",
        "tool_input": {
            "file_path": str(target),
            "old_string": "    return sum(items)",
            "new_string": "    return round(sum(items), 2)",
        },
        "tool_use_id": call_id,
        **more,
    }
    hook(run_capture, "claude-code", payload, cwd=ws)


def recorded_decisions(home: Path) -> int:
    conn = sqlite3.connect(home / "data" / "capture.db", timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM decisions").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def proposals(run_capture: RunCapture) -> list[dict[str, Any]]:
    return [p for e in episodes_json(run_capture) for p in e["proposals"]]


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_a_rejection_in_the_dialog_is_recorded_with_its_source(
    tmp_path: Path,
    capture_home: Path,
    run_capture: RunCapture,
    receiver: Receiver,
    encoding: str,
) -> None:
    ws, target = workspace(tmp_path)
    hook_call(run_capture, ws, "PreToolUse", "toolu_01Rej", target)
    send_events(
        receiver,
        encoding,
        [
            {
                "event.name": "tool_decision",
                "tool_name": "Edit",
                "tool_use_id": "toolu_01Rej",
                "decision": "reject",
                "source": "user_reject",
            }
        ],
    )
    rejected = wait_for(
        lambda: [p for p in proposals(run_capture) if p["state"] == "rejected"],
        "the rejected proposal",
    )
    assert len(rejected) == 1
    assert rejected[0]["decided_by"] == "user_reject"
    assert rejected[0]["outcome"] == "rejected"
    episode_id = episodes_json(run_capture)[0]["id"]
    shown = json.loads(run_capture("show", episode_id, "--json", check=True).stdout)
    assert [(d["decision"], d["source"], d["explicit"]) for d in shown["decisions"]] == [
        ("reject", "user_reject", True)
    ]
    text = run_capture("show", episode_id, check=True).stdout
    assert "reject by user_reject (a person; otel)" in text

    # nothing that names the person is stored, in the database or beside it
    for path in (capture_home / "data").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert EMAIL.encode() not in data, path
            assert ACCOUNT.encode() not in data, path


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_an_accept_by_configuration_is_applied_and_not_explicit(
    tmp_path: Path,
    capture_home: Path,
    run_capture: RunCapture,
    receiver: Receiver,
    encoding: str,
) -> None:
    ws, target = workspace(tmp_path)
    hook_call(run_capture, ws, "PreToolUse", "toolu_01Acc", target)
    send_events(
        receiver,
        encoding,
        [
            {
                "event.name": "tool_decision",
                "tool_name": "Edit",
                "tool_use_id": "toolu_01Acc",
                "decision": "accept",
                "source": "config",
            }
        ],
    )
    # the decision arrives before the edit is recorded: it waits for the post-tool-use call
    wait_for(lambda: recorded_decisions(capture_home), "the decision to be recorded")
    target.write_text("def total(items):\n    return round(sum(items), 2)\n")
    hook_call(
        run_capture,
        ws,
        "PostToolUse",
        "toolu_01Acc",
        target,
        tool_response={"filePath": str(target), "success": True},
    )
    applied = wait_for(
        lambda: [p for p in proposals(run_capture) if p["state"] == "applied"],
        "the applied proposal",
    )
    assert applied[0]["decided_by"] == "config"
    episode_id = episodes_json(run_capture)[0]["id"]
    shown = json.loads(run_capture("show", episode_id, "--json", check=True).stdout)
    assert [(d["decision"], d["source"], d["explicit"]) for d in shown["decisions"]] == [
        ("accept", "config", False)
    ]
    # the report counts it as applied, and not approved by a person
    report = json.loads(run_capture("report", "--json", check=True).stdout)
    assert report["decisions"]["applied"] == 1
    assert report["decisions"]["applied_explicitly_approved"] == 0
    assert [
        (d["decision"], d["source"], d["explicit"]) for d in report["decisions"]["by_source"]
    ] == [("accept", "config", False)]


def test_bad_requests_get_4xx_and_the_receiver_keeps_serving(
    receiver: Receiver, capture_home: Path
) -> None:
    protobuf = {"Content-Type": "application/x-protobuf"}
    as_json = {"Content-Type": "application/json"}
    cases = [
        ("/v1/logs", b"\xff\xff\xff\xff not protobuf", protobuf, 400),
        ("/v1/logs", b"{not json", as_json, 400),
        ("/v1/logs", b'{"resourceLogs": 7}', as_json, 400),
        ("/v1/logs", b"[" * 100_000 + b"]" * 100_000, as_json, 400),
        ("/v1/logs", b"x" * 300_000, protobuf, 413),
        # a small body that inflates past the cap
        (
            "/v1/logs",
            gzip.compress(b"\0" * 2_000_000),
            {**protobuf, "Content-Encoding": "gzip"},
            413,
        ),
        ("/v1/logs", b"{}", {"Content-Type": "text/plain"}, 415),
        ("/v1/nothing", b"{}", as_json, 404),
    ]
    for path, body, headers, status in cases:
        got, _ = receiver.post(path, body, headers)
        assert got == status, (path, body[:20], headers, got)
    # a request that never says its length
    conn = http.client.HTTPConnection(receiver.host, receiver.port, timeout=30)
    conn.putrequest("POST", "/v1/logs")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    assert conn.getresponse().status == 411
    conn.close()

    # still serving: an empty export is answered with an empty response
    for headers, empty in ((as_json, b"{}"), (protobuf, b"")):
        got, reply = receiver.post("/v1/logs", empty, headers)
        assert got == 200
    assert json.loads(receiver.post("/v1/metrics", b"{}", as_json)[1]) == {}
    assert receiver.proc.poll() is None
    receipts = [
        json.loads(line)
        for line in (capture_home / "state" / "log" / "otlp.log").read_text().splitlines()
    ]
    assert sorted({r["status"] for r in receipts}) == [200, 400, 404, 411, 413, 415]


def test_it_binds_loopback_by_default(receiver: Receiver) -> None:
    assert receiver.host == "127.0.0.1"
    if os.name == "posix":
        out = subprocess.run(["ss", "-ltnp"], capture_output=True, text=True, check=False)
        if out.returncode == 0:
            listening = [line for line in out.stdout.splitlines() if f":{receiver.port} " in line]
            assert listening and all("127.0.0.1:" in line for line in listening)
