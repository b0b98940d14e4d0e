"""The agents' documented events (tests/fixtures/otlp, see its PROVENANCE.md) read into
decisions: who decided, whether a person did, and the call they are about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from capture.telemetry.otlp_decode import BadRequest, decode, encode_reply
from capture.telemetry.translate import read_events

FIXTURES = Path(__file__).parents[3] / "fixtures" / "otlp"
EMAIL = "fixture.user@example.com"


def reading_of(name: str, encoding: str = "json"):  # type: ignore[no-untyped-def]
    body = (FIXTURES / f"{name}.logs.json").read_bytes()
    if encoding == "protobuf":
        request = ExportLogsServiceRequest()
        json_format.Parse(body, request)
        body = request.SerializeToString()
        kind = "application/x-protobuf"
    else:
        kind = "application/json"
    decoded = decode("/v1/logs", body, content_type=kind, limit=1 << 20)
    return decoded, read_events(decoded.events)


def summary(reading) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [
        (d.agent, d.decision, d.source, d.explicit, d.call_id, d.tool) for d in reading.decisions
    ]


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_claude_code_decisions_and_their_sources(encoding: str) -> None:
    decoded, reading = reading_of("claude-code", encoding)
    assert summary(reading) == [
        ("claude-code", "reject", "user_reject", True, "toolu_01A", "Edit"),
        ("claude-code", "accept", "config", False, "toolu_01B", "Write"),
        ("claude-code", "accept", "user_temporary", True, "toolu_01C", "Edit"),
        ("claude-code", "accept", "user_temporary", True, "toolu_01C", "Edit"),
    ]
    assert reading.decisions[0].session_id == "9a3e1c52-6b0d-4f7e-8c21-5d4b3a2f1e09"
    assert reading.decisions[3].detail == {"success": True}
    assert (decoded.records, reading.understood, reading.not_understood) == (5, 5, 0)


def test_codex_decisions() -> None:
    _, reading = reading_of("codex")
    assert summary(reading) == [
        ("codex", "reject", "User", True, "call_7Qx1", "apply_patch"),
        ("codex", "accept", "User", True, "call_7Qx2", "apply_patch"),
        ("codex", "accept", "Config", False, "call_7Qx3", "shell"),
    ]
    assert reading.decisions[0].session_id == "019a7b3c-2d4e-7f60-8a9b-0c1d2e3f4a5b"


def test_gemini_decisions_with_what_the_user_modified() -> None:
    _, reading = reading_of("gemini")
    assert summary(reading) == [
        ("gemini", "modify", "user", True, None, "replace"),
        ("gemini", "accept", "auto_accept", False, None, "write_file"),
        ("gemini", "reject", "user", True, None, "replace"),
    ]
    assert reading.decisions[0].detail["user_added_lines"] == 2


def test_copilot_edit_outcomes() -> None:
    _, reading = reading_of("copilot")
    assert summary(reading) == [
        ("copilot", "accept", "user_edit", True, "req_4c1e", "edit"),
        ("copilot", "reject", "user_hunk", True, "req_4c1f", "edit"),
        ("copilot", "accept", "user_inline", True, None, "inline"),
    ]


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini", "copilot"])
def test_identity_attributes_are_dropped_on_receipt(name: str) -> None:
    decoded, reading = reading_of(name)
    # Copilot Chat's events name the repository, not the person
    assert decoded.dropped_identity > 0 or name == "copilot"
    for event in decoded.events:
        assert EMAIL not in json.dumps(event.attributes, default=str)
        assert not {"user.email", "organization.id", "user.account_uuid"} & set(event.attributes)
    assert EMAIL not in repr(reading.decisions)


def test_a_known_event_without_its_decision_is_not_understood() -> None:
    body = json.loads((FIXTURES / "claude-code.logs.json").read_text())
    record = body["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    record["attributes"] = [a for a in record["attributes"] if a["key"] != "decision"]
    decoded = decode(
        "/v1/logs", json.dumps(body).encode(), content_type="application/json", limit=1 << 20
    )
    reading = read_events(decoded.events)
    assert reading.not_understood == 1 and len(reading.decisions) == 3
    reply = json.loads(encode_reply("/v1/logs", "json", rejected=1, message="x"))
    assert reply == {"partialSuccess": {"rejectedLogRecords": "1", "errorMessage": "x"}}
    assert json.loads(encode_reply("/v1/logs", "json")) == {}


@pytest.mark.parametrize(
    ("body", "kind", "status"),
    [
        (b"{", "application/json", 400),
        (b"\x0a\xff\xff\xff\xff\x0f", "application/x-protobuf", 400),
        (b"{}", "text/plain", 415),
        (b"[" * 50_000, "application/json", 400),
    ],
)
def test_bodies_that_do_not_decode(body: bytes, kind: str, status: int) -> None:
    with pytest.raises(BadRequest) as caught:
        decode("/v1/logs", body, content_type=kind, limit=1 << 20)
    assert caught.value.status == status


def test_deeply_nested_values_are_cut() -> None:
    # (nesting past the parsers' own recursion limit is a 400, as above)
    value: dict = {"stringValue": "leaf"}
    for _ in range(20):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    body = {
        "resourceLogs": [
            {"scopeLogs": [{"logRecords": [{"attributes": [{"key": "deep", "value": value}]}]}]}
        ]
    }
    decoded = decode(
        "/v1/logs", json.dumps(body).encode(), content_type="application/json", limit=1 << 20
    )
    depth, node = 0, decoded.events[0].attributes["deep"]
    while isinstance(node, dict):
        node, depth = node["k"], depth + 1
    assert node is None and depth <= 8
