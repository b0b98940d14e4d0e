"""An OTLP/HTTP request body into telemetry events, and the reply the OTLP specification asks
for, decoded and encoded with the official `opentelemetry-proto` messages.

Protobuf (`application/x-protobuf`) and JSON (`application/json`) bodies, gzip-compressed or
not, for the three signals. Log records and spans become events (span events too); metric
data points are counted and otherwise ignored. Identity attributes are dropped here, before
anything else sees them."""

from __future__ import annotations

import base64
import contextlib
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from capture.telemetry.events import TelemetryEvent, is_identity

__all__ = [
    "MAX_ATTRIBUTE_DEPTH",
    "SIGNALS",
    "BadRequest",
    "Decoded",
    "decode",
    "encode_reply",
    "encode_status",
    "encoding_of",
]

#: path -> (signal, request message, response message)
SIGNALS: dict[str, tuple[str, type[Message], type[Message]]] = {
    "/v1/logs": (
        "logs",
        logs_service_pb2.ExportLogsServiceRequest,
        logs_service_pb2.ExportLogsServiceResponse,
    ),
    "/v1/metrics": (
        "metrics",
        metrics_service_pb2.ExportMetricsServiceRequest,
        metrics_service_pb2.ExportMetricsServiceResponse,
    ),
    "/v1/traces": (
        "traces",
        trace_service_pb2.ExportTraceServiceRequest,
        trace_service_pb2.ExportTraceServiceResponse,
    ),
}

#: Nested values (arrays, maps) deeper than this are cut: no agent sends them, and a hostile
#: body could otherwise make the flattening recurse without end.
MAX_ATTRIBUTE_DEPTH = 8


class BadRequest(Exception):
    """The request cannot be used; `status` is the HTTP code to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Decoded:
    signal: str
    events: list[TelemetryEvent] = field(default_factory=list)
    #: data points, log records or spans in the request
    records: int = 0
    dropped_identity: int = 0


def encoding_of(content_type: str | None) -> str:
    """`protobuf` or `json`; raises BadRequest(415) for anything else."""
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind == "application/x-protobuf":
        return "protobuf"
    if kind == "application/json":
        return "json"
    raise BadRequest(415, f"unsupported content type {kind or '(none)'!r}")


def _inflate(body: bytes, content_encoding: str | None, limit: int) -> bytes:
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise BadRequest(415, f"unsupported content encoding {encoding!r}")
    inflater = zlib.decompressobj(wbits=47 if encoding == "gzip" else 15)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise BadRequest(400, f"bad {encoding} body: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise BadRequest(413, f"body larger than {limit} bytes once decompressed")
    return out


def _value(value: AnyValue, depth: int = 0) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value"):
        if depth >= MAX_ATTRIBUTE_DEPTH:
            return None
        if kind == "array_value":
            return [_value(v, depth + 1) for v in value.array_value.values]
        return {kv.key: _value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def _attributes(pairs: Iterator[KeyValue] | Any, into: dict[str, Any], decoded: Decoded) -> None:
    for kv in pairs:
        if is_identity(kv.key):
            decoded.dropped_identity += 1
            continue
        into[kv.key] = _value(kv.value)


def _seconds(nanos: int) -> float | None:
    return nanos / 1e9 if nanos else None


def _log_events(request: Any, decoded: Decoded) -> None:
    for resource_logs in request.resource_logs:
        resource: dict[str, Any] = {}
        _attributes(resource_logs.resource.attributes, resource, decoded)
        service = resource.get("service.name")
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                decoded.records += 1
                attributes = dict(resource)
                _attributes(record.attributes, attributes, decoded)
                body = _value(record.body)
                name = (
                    getattr(record, "event_name", "")
                    or attributes.get("event.name")
                    or (body if isinstance(body, str) and len(body) <= 200 else "")
                )
                decoded.events.append(
                    TelemetryEvent(
                        name=str(name or ""),
                        attributes=attributes,
                        at=_seconds(record.time_unix_nano or record.observed_time_unix_nano),
                        service=str(service) if service is not None else None,
                        body=body,
                    )
                )


def _span_events(request: Any, decoded: Decoded) -> None:
    for resource_spans in request.resource_spans:
        resource: dict[str, Any] = {}
        _attributes(resource_spans.resource.attributes, resource, decoded)
        service = resource.get("service.name")
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                decoded.records += 1
                attributes = dict(resource)
                _attributes(span.attributes, attributes, decoded)
                decoded.events.append(
                    TelemetryEvent(
                        name=span.name,
                        attributes=attributes,
                        at=_seconds(span.end_time_unix_nano or span.start_time_unix_nano),
                        service=str(service) if service is not None else None,
                    )
                )
                for event in span.events:
                    nested = dict(attributes)
                    _attributes(event.attributes, nested, decoded)
                    decoded.events.append(
                        TelemetryEvent(
                            name=event.name,
                            attributes=nested,
                            at=_seconds(event.time_unix_nano),
                            service=str(service) if service is not None else None,
                        )
                    )


def _count_points(request: Any, decoded: Decoded) -> None:
    for resource_metrics in request.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                if kind is not None:
                    decoded.records += len(getattr(metric, kind).data_points)


_ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId", "trace_id", "span_id"})


def _ids_to_base64(data: Any) -> None:
    """OTLP/JSON writes trace and span ids in hex where protobuf's JSON mapping expects base64:
    rewrite them in place (an id that is not hex is left for the parser to judge)."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in _ID_FIELDS and isinstance(value, str):
                    with contextlib.suppress(ValueError):
                        item[key] = base64.b64encode(bytes.fromhex(value)).decode()
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))


def decode(
    path: str,
    body: bytes,
    *,
    content_type: str | None,
    content_encoding: str | None = None,
    limit: int,
) -> Decoded:
    """The events of one request; raises BadRequest with the status to answer."""
    if path not in SIGNALS:
        raise BadRequest(404, f"no such endpoint {path!r}")
    signal, request_type, _ = SIGNALS[path]
    encoding = encoding_of(content_type)
    raw = _inflate(body, content_encoding, limit)
    request = request_type()
    try:
        if encoding == "protobuf":
            request.ParseFromString(raw)
        else:
            data = json.loads(raw)
            _ids_to_base64(data)
            json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except (DecodeError, json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        raise BadRequest(400, f"malformed {encoding} {signal} request: {exc}"[:300]) from None
    decoded = Decoded(signal=signal)
    if signal == "logs":
        _log_events(request, decoded)
    elif signal == "traces":
        _span_events(request, decoded)
    else:
        _count_points(request, decoded)
    return decoded


_REJECTED_FIELD = {
    "logs": "rejected_log_records",
    "metrics": "rejected_data_points",
    "traces": "rejected_spans",
}


def encode_reply(path: str, encoding: str, *, rejected: int = 0, message: str = "") -> bytes:
    """The Export*ServiceResponse: empty when every record was understood, else a partial
    success naming how many were rejected and why."""
    signal, _, response_type = SIGNALS[path]
    response = response_type()
    if rejected:
        partial = response.partial_success
        setattr(partial, _REJECTED_FIELD[signal], rejected)
        partial.error_message = message
    if encoding == "protobuf":
        return bytes(response.SerializeToString())
    return json_format.MessageToJson(response, indent=None).encode()


def encode_status(encoding: str, code: int, message: str) -> bytes:
    """A google.rpc.Status body for an error reply, in the request's encoding."""
    from google.rpc import status_pb2

    status = status_pb2.Status(code=code, message=message)
    if encoding == "protobuf":
        return bytes(status.SerializeToString())
    return json_format.MessageToJson(status, indent=None).encode()
