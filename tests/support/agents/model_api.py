"""A scripted model behind the three APIs the agent CLIs speak, on a loopback port:

- Anthropic Messages (`POST /v1/messages`, streamed as server-sent events): Claude Code;
- OpenAI Responses (`POST /v1/responses`, server-sent events): Codex;
- Gemini (`:generateContent`, `:streamGenerateContent?alt=sse`, `:countTokens`): Gemini CLI.

It keeps no state of its own: the step it answers is the number of tool results the request
already carries, so a retried or resumed conversation gets the same answer. Requests that are
not the agent's main loop (titles, classifiers, token counts) get a short harmless answer.
Every request is kept (`requests`) for the tests and the newest-versions report.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.agents.scenario import Step, for_agent, tool_call

__all__ = ["ScriptedModel"]


def _sse(event: str | None, data: dict[str, Any]) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def _tool_results(agent: str, body: dict[str, Any]) -> int:
    """How many tool calls the conversation has answered so far."""
    if agent == "claude-code":
        return sum(
            1
            for message in body.get("messages") or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
    if agent == "codex":
        return sum(
            1
            for item in body.get("input") or []
            if isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output")
        )
    return sum(
        1
        for content in body.get("contents") or []
        for part in content.get("parts") or []
        if isinstance(part, dict) and "functionResponse" in part
    )


class ScriptedModel:
    """One scripted model for one agent's sessions. `cwd`: the repository the agent works in
    (the scenario's paths are relative to it)."""

    def __init__(self, agent: str, steps: list[Step], cwd: str) -> None:
        self.agent = agent
        self.steps = for_agent(agent, steps)
        self.cwd = cwd
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def step_for(self, body: dict[str, Any]) -> tuple[int, Step]:
        done = _tool_results(self.agent, body)
        return done, self.steps[min(done, len(self.steps) - 1)]

    def _keep(self, path: str, body: Any, label: str) -> None:
        with self._lock:
            self.requests.append({"path": path, "label": label, "body": body})

    # --- the three APIs -------------------------------------------------------------------

    def anthropic(self, body: dict[str, Any]) -> tuple[str, bytes]:
        names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        if "Bash" not in names:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": "OK"}]
            stop, label = "end_turn", "side"
        else:
            done, step = self.step_for(body)
            label = f"step{done}"
            if "text" in step:
                blocks, stop = [{"type": "text", "text": step["text"]}], "end_turn"
            else:
                name, arguments = tool_call(self.agent, step, self.cwd)
                blocks = [
                    {
                        "type": "tool_use",
                        "id": "toolu_" + uuid.uuid4().hex[:24],
                        "name": name,
                        "input": arguments,
                    }
                ]
                stop = "tool_use"
        self._keep("/v1/messages", body, label)
        usage = {"input_tokens": 100, "output_tokens": 1}
        message = {
            "id": "msg_" + uuid.uuid4().hex[:24],
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-sonnet-4-5"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            whole = dict(message, content=blocks, stop_reason=stop)
            return "application/json", json.dumps(whole).encode()
        out = [_sse("message_start", {"type": "message_start", "message": message})]
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = dict(block, input={})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            out.append(
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": start},
                )
            )
            out.append(
                _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": delta},
                )
            )
            out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
        out.append(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 20},
                },
            )
        )
        out.append(_sse("message_stop", {"type": "message_stop"}))
        return "text/event-stream", "".join(out).encode()

    def responses(self, body: dict[str, Any]) -> tuple[str, bytes]:
        done, step = self.step_for(body)
        self._keep("/v1/responses", body, f"step{done}")
        if "text" in step:
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "id": "msg_" + uuid.uuid4().hex[:16],
                "content": [{"type": "output_text", "text": step["text"], "annotations": []}],
            }
        else:
            name, arguments = tool_call(self.agent, step, self.cwd)
            offered = {
                t.get("name"): t.get("type") for t in body.get("tools") or [] if isinstance(t, dict)
            }
            call_id = "call_" + uuid.uuid4().hex[:16]
            if name == "apply_patch" and offered.get("apply_patch") == "custom":
                item = {"type": "custom_tool_call", "name": name, "input": arguments}
            elif name == "apply_patch":
                item = {
                    "type": "function_call",
                    "name": name,
                    "arguments": json.dumps({"input": arguments}),
                }
            else:
                item = {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}
            item.update(id="fc_" + uuid.uuid4().hex[:16], status="completed", call_id=call_id)
        response = {
            "id": "resp_" + uuid.uuid4().hex[:20],
            "object": "response",
            "status": "in_progress",
            "model": body.get("model"),
            "output": [],
        }
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 120,
        }
        out = _sse("response.created", {"type": "response.created", "response": response})
        out += _sse(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        )
        if item["type"] == "message":
            out += _sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "output_index": 0,
                    "content_index": 0,
                    "item_id": item["id"],
                    "delta": step["text"],
                },
            )
        out += _sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        )
        finished = dict(response, status="completed", output=[item], usage=usage)
        out += _sse("response.completed", {"type": "response.completed", "response": finished})
        return "text/event-stream", out.encode()

    def gemini(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        names = {
            d.get("name")
            for t in body.get("tools") or []
            for d in t.get("functionDeclarations") or []
            if isinstance(d, dict)
        }
        # headless without yolo the CLI offers no tool that needs a confirmation: any tool
        # offered marks the main loop
        if not names:
            config = body.get("generationConfig") or {}
            wants_json = config.get("responseMimeType") == "application/json"
            # the CLI's routing and next-speaker checks ask for JSON of their own shape
            text = (
                json.dumps(
                    {
                        "reasoning": "scripted",
                        "next_speaker": "user",
                        "model_choice": "flash",
                        "complexity_reasoning": "scripted",
                        "complexity_score": 1,
                    }
                )
                if wants_json
                else "OK"
            )
            parts: list[dict[str, Any]] = [{"text": text}]
            label = "side"
        else:
            done, step = self.step_for(body)
            label = f"step{done}"
            if "text" in step:
                parts = [{"text": step["text"]}]
            else:
                name, arguments = tool_call(self.agent, step, self.cwd)
                parts = [{"functionCall": {"name": name, "args": arguments}}]
        self._keep(path, body, label)
        answer = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "totalTokenCount": 120,
            },
            "modelVersion": path.split("/models/")[-1].split(":")[0],
        }
        if ":streamGenerateContent" in path:
            return "text/event-stream", _sse(None, answer).encode()
        return "application/json", json.dumps(answer).encode()

    def answer(self, path: str, body: Any) -> tuple[str, bytes]:
        bare = path.split("?")[0]
        if not isinstance(body, dict):
            body = {}
        if bare.endswith("/v1/messages"):
            return self.anthropic(body)
        if bare.endswith("/count_tokens"):
            return "application/json", b'{"input_tokens": 1000}'
        if bare.endswith("/responses"):
            return self.responses(body)
        if ":countTokens" in bare:
            return "application/json", b'{"totalTokens": 100}'
        if ":generateContent" in bare or ":streamGenerateContent" in bare:
            return self.gemini(path, body)
        self._keep(path, body, "other")
        return "application/json", b"{}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, ctype: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if "/models" in self.path:
                    self._send("application/json", b'{"data": [], "models": [], "has_more": false}')
                else:
                    self._send("application/json", b"{}")

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                if self.headers.get("content-encoding", "").lower() == "zstd":
                    raw = _unzstd(raw)
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                self._send(*model.answer(self.path, body))

        return Handler


def _unzstd(raw: bytes) -> bytes:
    """Codex may compress its requests; without the codec the request reads as empty."""
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        return b""
    data: bytes = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    return data
