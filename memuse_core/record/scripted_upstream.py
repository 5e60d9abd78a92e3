"""A small scripted OpenAI-compatible server: the upstream for recorder tests, examples and the benchmark.

It answers `.../chat/completions` (plain or streamed), `.../responses` and `.../embeddings` from a
*policy*: a callable that receives the parsed request body and returns a reply spec, or a list of
specs used in order. A reply spec is a dict:

    {"content": "text", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}
    {"status": 500, "body": {"error": {"message": "boom"}}}     # an upstream error, verbatim
    {"stream_delay": 0.2, ...}                                    # stream slowly (one chunk per delay)

Streaming is used when the request says `"stream": true`. Every received body is kept in
`received` so tests can compare what the upstream got with what the recorder wrote.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Policy = Callable[[dict[str, Any]], dict[str, Any]]


class ScriptedUpstream(ThreadingHTTPServer):
    """Serve scripted replies on 127.0.0.1 (see module docstring)."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # socketserver's default of 5 resets connections under load

    def __init__(self, policy: Policy | list[dict[str, Any]], *, port: int = 0, model: str = "scripted-1"):
        if isinstance(policy, list):
            replies = list(policy)
            lock = threading.Lock()

            def from_list(_body: dict[str, Any]) -> dict[str, Any]:
                with lock:
                    return replies.pop(0) if replies else {"content": "no more scripted replies"}

            self.policy: Policy = from_list
        else:
            self.policy = policy
        self.model = model
        self.received: list[dict[str, Any]] = []
        self.received_headers: list[dict[str, str]] = []
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> ScriptedUpstream:
        threading.Thread(
            target=self.serve_forever, args=(0.05,), name="scripted-upstream", daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


def tool_call(command: str, call_id: str | None = None, name: str = "bash") -> dict[str, Any]:
    """A scripted bash tool call."""
    return {"id": call_id or f"call_{uuid.uuid4().hex[:10]}", "name": name, "arguments": {"command": command}}


def _wire_tool_calls(spec: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for i, tc in enumerate(spec.get("tool_calls") or []):
        args = tc.get("arguments", {})
        out.append(
            {
                "index": i,
                "id": tc.get("id") or f"call_{uuid.uuid4().hex[:10]}",
                "type": "function",
                "function": {
                    "name": tc.get("name", "bash"),
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
    return out


def _usage(body: dict[str, Any], content: str) -> dict[str, Any]:
    prompt = max(1, len(json.dumps(body.get("messages") or body.get("input") or "")) // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": max(1, len(content) // 4),
        "total_tokens": prompt + max(1, len(content) // 4),
        "prompt_tokens_details": {"cached_tokens": 0},
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: ScriptedUpstream

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_GET(self) -> None:
        self._json(200, {"object": "list", "data": [{"id": self.server.model, "object": "model"}]})

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict):
            self._json(400, {"error": {"message": "invalid JSON"}})
            return
        self.server.received.append(body)
        self.server.received_headers.append({k.lower(): v for k, v in self.headers.items()})
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("embeddings"):
            inputs = body.get("input")
            k = len(inputs) if isinstance(inputs, list) else 1
            self._json(
                200,
                {
                    "object": "list",
                    "model": self.server.model,
                    "data": [{"object": "embedding", "index": i, "embedding": [0.0] * 8} for i in range(k)],
                    "usage": {"prompt_tokens": 3 * k, "total_tokens": 3 * k},
                },
            )
            return
        spec = self.server.policy(body)
        if "status" in spec:
            self._json(int(spec["status"]), spec.get("body", {"error": {"message": "scripted error"}}))
            return
        if path.endswith("responses"):
            self._responses(body, spec)
        elif body.get("stream"):
            self._stream(body, spec)
        else:
            self._chat(body, spec)

    def _json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chat(self, body: dict[str, Any], spec: dict[str, Any]) -> None:
        content = spec.get("content")
        tcs = _wire_tool_calls(spec)
        msg: dict[str, Any] = {"role": "assistant", "content": content}
        if tcs:
            msg["tool_calls"] = [{k: v for k, v in tc.items() if k != "index"} for tc in tcs]
        self._json(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.server.model,
                "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tcs else "stop"}],
                "usage": _usage(body, content or ""),
            },
        )

    def _stream(self, body: dict[str, Any], spec: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        delay = float(spec.get("stream_delay", 0.0))
        content = spec.get("content") or ""
        pieces = [content[i : i + 8] for i in range(0, len(content), 8)] or [""]
        events: list[dict[str, Any]] = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": p}}]} for p in pieces
        ]
        for tc in _wire_tool_calls(spec):
            events.append({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}}]})
        events.append(
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": _usage(body, content)}
        )
        try:
            for ev in events:
                ev.update({"id": "chatcmpl-s", "object": "chat.completion.chunk", "model": self.server.model})
                self._chunk(b"data: " + json.dumps(ev).encode() + b"\n\n")
                if delay:
                    time.sleep(delay)
            self._chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _responses(self, body: dict[str, Any], spec: dict[str, Any]) -> None:
        out: list[dict[str, Any]] = []
        if spec.get("content"):
            out.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": spec["content"]}],
                }
            )
        for tc in _wire_tool_calls(spec):
            out.append(
                {
                    "type": "function_call",
                    "call_id": tc["id"],
                    "name": tc["function"]["name"],
                    "arguments": tc["function"]["arguments"],
                }
            )
        u = _usage(body, spec.get("content") or "")
        final = {
            "id": f"resp_{uuid.uuid4().hex[:12]}",
            "object": "response",
            "model": self.server.model,
            "output": out,
            "usage": {"input_tokens": u["prompt_tokens"], "output_tokens": u["completion_tokens"]},
        }
        if not body.get("stream"):
            self._json(200, final)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in [
            (spec.get("content") or "")[i : i + 8] for i in range(0, len(spec.get("content") or ""), 8)
        ]:
            self._chunk(
                b"event: response.output_text.delta\ndata: "
                + json.dumps({"type": "response.output_text.delta", "delta": piece}).encode()
                + b"\n\n"
            )
        self._chunk(
            b"event: response.completed\ndata: "
            + json.dumps({"type": "response.completed", "response": final}).encode()
            + b"\n\n"
        )
        self.wfile.write(b"0\r\n\r\n")
