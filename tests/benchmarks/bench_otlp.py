"""Benchmark: the OTLP receiver against a bare HTTP handler, in one run.

Run ``python tests/benchmarks/bench_otlp.py``. It sends Claude Code-shaped
`claude_code.tool_decision` log records, 500 a request (an exporter's batch), over one
keep-alive connection to:

- the receiver (`capture.telemetry.receiver.OtlpReceiver`): decode, drop identity, translate,
  answer, and write every decision to the store on its writer thread; timed until the last
  decision is written (and, apart, until the last reply);
- a bare handler on the same stdlib HTTP server: it reads the body and parses it into the
  same `opentelemetry-proto` message, and answers an empty response: the floor.

for protobuf and JSON bodies, and prints records per second and the ratio. Then a burst of
10,000 records (20 requests of 500, sent at once from 20 threads) into a fresh receiver, with
the peak of Python's allocations (tracemalloc) and the process's peak RSS.
"""

from __future__ import annotations

import http.client
import os
import resource
import sys
import tempfile
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from google.protobuf import json_format  # noqa: E402
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # noqa: E402
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

BATCH = 500
REQUESTS = 20  # 10,000 records per measured run
REPEATS = 3
TYPES = {"protobuf": "application/x-protobuf", "json": "application/json"}


def request_body(encoding: str, start: int) -> bytes:
    request = ExportLogsServiceRequest()
    logs = request.resource_logs.add()
    for key, value in (("service.name", "claude-code"), ("user.email", "dev@example.com")):
        kv = logs.resource.attributes.add()
        kv.key, kv.value.string_value = key, value
    scope = logs.scope_logs.add()
    scope.scope.name = "com.anthropic.claude_code.events"
    for n in range(start, start + BATCH):
        record = scope.log_records.add()
        record.time_unix_nano = 1_796_000_000_000_000_000 + n
        record.body.string_value = "claude_code.tool_decision"
        for key, value in (
            ("event.name", "tool_decision"),
            ("session.id", "9a3e1c52-6b0d-4f7e-8c21-5d4b3a2f1e09"),
            ("tool_name", "Edit"),
            ("tool_use_id", f"toolu_{n:08d}"),
            ("decision", "accept" if n % 3 else "reject"),
            ("source", "config" if n % 2 else "user_temporary"),
            ("user.email", "dev@example.com"),
            ("terminal.type", "vscode"),
        ):
            kv = record.attributes.add()
            kv.key, kv.value.string_value = key, value
    if encoding == "protobuf":
        return bytes(request.SerializeToString())
    return json_format.MessageToJson(request, indent=None).encode()


class _Bare(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportLogsServiceRequest()
        if self.headers["Content-Type"] == TYPES["protobuf"]:
            request.ParseFromString(body)
            reply = ExportLogsServiceResponse().SerializeToString()
        else:
            json_format.Parse(body, request, ignore_unknown_fields=True)
            reply = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", self.headers["Content-Type"])
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def send_all(port: int, encoding: str, bodies: list[bytes]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    for body in bodies:
        conn.request("POST", "/v1/logs", body=body, headers={"Content-Type": TYPES[encoding]})
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
    conn.close()


def fresh_receiver(home: Path) -> Any:
    os.environ["CAPTURE_HOME"] = str(home)
    from capture.config import load_config
    from capture.telemetry.receiver import OtlpReceiver

    receiver = OtlpReceiver(load_config(), port=0, max_body=16 * 1024 * 1024)
    receiver.start()
    return receiver


def time_receiver(encoding: str, bodies: list[bytes], root: Path, run: int) -> tuple[float, float]:
    receiver = fresh_receiver(root / f"{encoding}-{run}")
    # a first request opens the store and migrates it outside the timing
    send_all(receiver.address[1], encoding, [request_body(encoding, 10**7)])
    receiver.drained()
    began = time.perf_counter()
    send_all(receiver.address[1], encoding, bodies)
    replied = time.perf_counter() - began
    receiver.drained()
    written = time.perf_counter() - began
    receiver.stop()
    return replied, written


def time_bare(encoding: str, bodies: list[bytes]) -> float:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bare)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    began = time.perf_counter()
    send_all(server.server_address[1], encoding, bodies)
    took = time.perf_counter() - began
    server.shutdown()
    server.server_close()
    return took


def burst(root: Path) -> tuple[float, float, float]:
    bodies = [request_body("protobuf", i * BATCH) for i in range(REQUESTS)]
    receiver = fresh_receiver(root / "burst")
    send_all(receiver.address[1], "protobuf", [request_body("protobuf", 10**7)])
    receiver.drained()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    threads = [
        threading.Thread(target=send_all, args=(receiver.address[1], "protobuf", [b]))
        for b in bodies
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    receiver.drained()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    receiver.stop()
    return peak / 2**20, rss_before, rss_after


def main() -> None:
    records = BATCH * REQUESTS
    print(f"{records:,} Claude Code tool_decision records, {BATCH} a request, best of {REPEATS}\n")
    print(
        "| encoding | body/request | bare handler rec/s | receiver (replied) rec/s | "
        "receiver (written) rec/s | written/bare |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for encoding in ("protobuf", "json"):
            bodies = [request_body(encoding, i * BATCH) for i in range(REQUESTS)]
            bare = min(time_bare(encoding, bodies) for _ in range(REPEATS))
            runs = [time_receiver(encoding, bodies, root, r) for r in range(REPEATS)]
            replied = min(r[0] for r in runs)
            written = min(r[1] for r in runs)
            print(
                f"| {encoding} | {len(bodies[0]) / 1024:.0f} KiB | {records / bare:,.0f} | "
                f"{records / replied:,.0f} | {records / written:,.0f} | {bare / written:.2f}x |"
            )
        peak, rss_before, rss_after = burst(root)
        print(
            f"\nburst of {records:,} records (20 requests at once): Python allocations peak "
            f"{peak:.1f} MiB; process peak RSS {rss_before:.0f} MiB before, {rss_after:.0f} MiB "
            "after"
        )


if __name__ == "__main__":
    main()
