"""A scripted OpenAI-compatible chat-completions server (stdlib only).

It lets the real `openai` client drive the real judge loop offline: tests, benchmarks, and users
who want to try `memuse judge --judge llm` without an endpoint. Like mini-swe-agent's scripted model,
it is a real thing made small, not a mock.

Every conversation (keyed by its first two messages) walks the script's reply list with its own
cursor, so many concurrent conversations can share one script. A reply can be a text message, tool
calls (arguments as an object or a raw string, e.g. invalid JSON), an automatic valid answer built
from the entry list in the conversation's first user message, an HTTP error (429/500) or a slow
reply. Usage is reported with cached tokens (the prefix shared with the conversation's previous
request, or with the static system prompt).

Python:

    with ScriptedServer(Script(replies=[ScriptedReply(answer="auto")]), latency=0.2) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="unused")

Command line:

    python -m memuse_core.judge.scripted_server --script script.json --port 8099 [--latency 1]

Script file (JSON): {"replies": [{"tool_calls": [{"name": "read_evidence", "arguments":
{"path": "steps/S3.md"}}]}, {"answer": "auto", "answer_overrides": {"relevance": true}}],
"when_exhausted": "auto_answer"}
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .script import ReplyFn, Script, ScriptedReply, ScriptedToolCall, auto_answer, unshown_files

__all__ = ["Script", "ScriptedReply", "ScriptedServer", "ScriptedToolCall", "load_script"]


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix (block compare, then characters: linear time)."""
    n = min(len(a), len(b))
    i, step = 0, 4096
    while i + step <= n and a[i : i + step] == b[i : i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i


class _Httpd(ThreadingHTTPServer):
    # The stdlib default listen backlog is 5: a burst of 32 concurrent connects overflows it and
    # the kernel drops SYNs, which the client retries after ~1 s. Real endpoints accept bursts.
    request_queue_size = 256
    daemon_threads = True


class ScriptedServer:
    """A local chat-completions server with scripted replies (see module docstring)."""

    def __init__(
        self,
        script: Script | ReplyFn | None = None,
        *,
        latency: float | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script = script if script is not None else Script()
        base_latency = self.script.latency if isinstance(self.script, Script) else 0.0
        self.latency = base_latency if latency is None else latency
        self.requests: list[dict[str, Any]] = []
        """Every request body received, in arrival order."""
        self._cursor: dict[str, int] = {}
        self._last: dict[str, str] = {}
        self._lock = threading.Lock()
        self._n = 0
        self._httpd = _Httpd((host, port), self._handler())
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """Base URL for `openai.OpenAI(base_url=...)`."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- replies ---------------------------------------------------------------------------
    def _next_reply(self, body: dict[str, Any]) -> tuple[ScriptedReply, int, dict[str, int]]:
        msgs = body.get("messages") or []
        key = hashlib.sha256(json.dumps(msgs[:2], sort_keys=True).encode()).hexdigest()
        ser = json.dumps(msgs, sort_keys=True)
        with self._lock:
            self.requests.append(body)
            idx = self._cursor.get(key, 0)
            self._cursor[key] = idx + 1
            prev = self._last.get(key)
            self._last[key] = ser
            self._n += 1
            n = self._n
        cached = _common_prefix(prev, ser) if prev else len(json.dumps(msgs[:1], sort_keys=True))
        if callable(self.script):
            reply = self.script(body, idx)
        elif self.script.read_unshown_first and idx == 0 and (todo := unshown_files(msgs)):
            reply = ScriptedReply(
                tool_calls=[
                    ScriptedToolCall(name="read_evidence", arguments={"path": p, "limit": 40000})
                    for p in todo
                ]
            )
        elif self.script.read_unshown_first and idx - 1 < len(self.script.replies) and idx > 0:
            reply = self.script.replies[idx - 1]
        elif not self.script.read_unshown_first and idx < len(self.script.replies):
            reply = self.script.replies[idx]
        elif self.script.when_exhausted == "repeat_last" and self.script.replies:
            reply = self.script.replies[-1]
        elif self.script.when_exhausted == "error":
            reply = ScriptedReply(status=500, error="script exhausted")
        else:
            reply = ScriptedReply(answer="auto", answer_overrides=self.script.answer_overrides)
        usage = {"prompt_tokens": len(ser) // 4, "cached_tokens": min(cached, len(ser)) // 4}
        return reply, n, usage

    def _completion(
        self, body: dict[str, Any], reply: ScriptedReply, n: int, usage: dict[str, int], key: str = ""
    ) -> dict[str, Any]:
        msgs = body.get("messages") or []
        calls = []
        for i, tc in enumerate(reply.tool_calls):
            args = tc.arguments if isinstance(tc.arguments, str) else json.dumps(tc.arguments)
            calls.append(
                {"id": f"call_{n}_{i}", "type": "function", "function": {"name": tc.name, "arguments": args}}
            )
        if reply.answer == "auto":
            answer = auto_answer(msgs, reply)
            if reply.echo_key:
                answer["summary"] = f"{answer.get('summary', '')} (asked with key {key})"
                for a in answer["assessments"]:
                    a["notes"] = f"{a.get('notes', '')}; the key was {key}."
            calls.append(
                {
                    "id": f"call_{n}_a",
                    "type": "function",
                    "function": {"name": "answer", "arguments": json.dumps(answer)},
                }
            )
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if calls:
            message["tool_calls"] = calls
        out_tokens = max(1, len(json.dumps(message)) // 4)
        u = {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": out_tokens,
            "cached_tokens": usage["cached_tokens"],
        }
        if reply.usage:
            u.update(reply.usage)
        out = {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {
                "prompt_tokens": u["prompt_tokens"],
                "completion_tokens": u["completion_tokens"],
                "total_tokens": u["prompt_tokens"] + u["completion_tokens"],
                "prompt_tokens_details": {"cached_tokens": u["cached_tokens"]},
            },
        }
        if reply.no_usage:
            del out["usage"]
        return out

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes; with Nagle on, the body waits for the
            # client's delayed ACK (~40 ms on Linux) on every keep-alive reply.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not re.search(r"/chat/completions/?$", self.path):
                    self._send(404, {"error": {"message": f"unknown path {self.path}"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                reply, n, usage = server._next_reply(body)
                wait = server.latency + reply.delay
                if wait > 0:
                    time.sleep(wait)
                if reply.drop:
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if reply.status != 200:
                    headers = {}
                    if reply.retry_after is not None:
                        headers["Retry-After"] = str(reply.retry_after)
                    message = reply.error
                    if reply.echo_headers:
                        message += f" (request headers: Authorization: {self.headers.get('Authorization')})"
                    self._send(
                        reply.status,
                        {"error": {"message": message, "type": "scripted", "code": str(reply.status)}},
                        headers,
                    )
                    return
                key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                self._send(200, server._completion(body, reply, n, usage, key))

        return Handler


def load_script(path: str | Path) -> Script:
    """Read a script file (JSON); raises ValueError naming the file on a bad script."""
    p = Path(path)
    try:
        return Script.model_validate_json(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{p}: file not found") from None
    except ValueError as e:
        first = str(e).splitlines()
        raise ValueError(f"{p}: invalid script: {' '.join(first[:3])}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m memuse_core.judge.scripted_server",
        description="Serve scripted chat-completions replies on localhost.",
    )
    ap.add_argument("--script", help="JSON script file (default: answer every span automatically)")
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--latency", type=float, default=None, help="seconds added to every reply")
    ap.add_argument(
        "--read-unshown-first",
        action="store_true",
        help="start each conversation by reading every file not shown in full",
    )
    a = ap.parse_args(argv)
    try:
        script = load_script(a.script) if a.script else Script()
        if a.read_unshown_first:
            script.read_unshown_first = True
    except ValueError as e:
        print(f"error: {e}")
        return 1
    srv = ScriptedServer(script, latency=a.latency, port=a.port)
    print(f"scripted chat-completions server on {srv.base_url} (Ctrl-C to stop)", flush=True)
    try:
        srv._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv._httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
