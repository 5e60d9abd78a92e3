"""The pass-through recording proxy for OpenAI-compatible endpoints (MemUse 3.2, A.1.1).

    /agent/v1/<api path>                  the agent's calls (its completed calls are the steps)
    /memory/v1/<api path>                 the memory system's own model calls
    /embedding/v1/<api path>              embedding requests
    /v1/<api path>                        same as /agent/v1
    /ep/<episode_id>/<role>/v1/<api path> explicit episode binding (or header X-MemUse-Episode)
    POST /_memuse/annotate                bridge annotations: {"op": ..., "args": {...}}
    header X-MemUse-Op: <id>              memory-operation id of a memory-system call (`op_ref`)
    GET  /_memuse/health                  liveness

Every request is forwarded byte for byte to `<upstream>/<api path>` with the caller's headers
(Authorization included; hop-by-hop and `X-MemUse-*` headers excepted) and the answer is returned
unchanged: status, headers and body, streamed chunk by chunk when the upstream streams. Chat
completions, the Responses API and embeddings are recorded as `model_call` events; other paths
(e.g. `GET /models`) pass through unrecorded. Headers are never written anywhere.

Faults never stop the proxy: an unreachable upstream becomes a 502 answer and an `error` call, an
upstream error status is relayed and recorded as `error` with its body, a client that disconnects
mid-stream leaves an `incomplete` call with what was received so far.
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .recorder import ROLES, AnnotationError, Recorder
from .wire import StreamAssembler, api_kind, parse_json_response

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "accept-encoding",
}
EPISODE_HEADER = "x-memuse-episode"
OP_HEADER = "x-memuse-op"


def parse_route(path: str) -> tuple[str, str | None, str] | None:
    """(role, explicit episode id, api path after /v1/) of a proxied path; None when not proxied."""
    parts = path.split("?", 1)[0].lstrip("/").split("/")
    episode = None
    if len(parts) >= 2 and parts[0] == "ep":
        episode, parts = parts[1], parts[2:]
    role = "agent"
    if parts and parts[0] in ROLES:
        role, parts = parts[0], parts[1:]
    if not parts or parts[0] != "v1":
        return None
    rest = "/".join(parts[1:])
    query = path.split("?", 1)[1] if "?" in path else ""
    return role, episode, rest + (f"?{query}" if query else "")


class _Upstream:
    """Where to forward: scheme, host, port and base path of the upstream URL."""

    def __init__(self, url: str, timeout: float):
        u = urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"--upstream {url!r}: expected an http(s) URL such as http://127.0.0.1:8000/v1")
        self.https = u.scheme == "https"
        self.host = u.hostname
        self.port = u.port or (443 if self.https else 80)
        self.base = u.path.rstrip("/")
        self.timeout = timeout
        self._local = threading.local()

    def connection(self, fresh: bool = False) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None or fresh:
            if conn is not None:
                conn.close()
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            conn = cls(self.host, self.port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class RecordingProxy(ThreadingHTTPServer):
    """A threading HTTP server that forwards and records (see module docstring)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        recorder: Recorder,
        upstream: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 600.0,
        quiet: bool = True,
    ):
        self.recorder = recorder
        self.upstream = _Upstream(upstream, timeout)
        self.quiet = quiet
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> RecordingProxy:
        """Serve in a daemon thread (for in-process use); returns self."""
        threading.Thread(target=self.serve_forever, name="memuse-proxy", daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _ClientGone(Exception):
    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: RecordingProxy

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if not self.server.quiet:
            sys.stderr.write("proxy: " + (format % args) + "\n")

    # -- entry points ------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        try:
            body = self._read_body()
            if self.path.startswith("/_memuse/"):
                self._control(body)
                return
            route = parse_route(self.path)
            if route is None:
                self._send_json(
                    404,
                    {
                        "error": {
                            "message": f"unknown proxy path {self.path.split('?')[0]}; "
                            "use /agent/v1/..., /memory/v1/... or /embedding/v1/...",
                            "type": "memuse_proxy_error",
                        }
                    },
                )
                return
            self._forward(body, *route)
        except _ClientGone:
            self.close_connection = True
        except Exception:  # never let one request take the proxy down
            self.close_connection = True
            sys.stderr.write("proxy: internal error\n" + traceback.format_exc(limit=3))
            try:
                self._send_json(
                    500,
                    {"error": {"message": "recording proxy internal error", "type": "memuse_proxy_error"}},
                )
            except Exception:
                pass

    def _read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def _send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    # -- bridge control ----------------------------------------------------------------------
    def _control(self, body: bytes) -> None:
        if self.path.startswith("/_memuse/health"):
            self._send_json(200, {"ok": True, "run_id": self.server.recorder.run_id})
            return
        if not self.path.startswith("/_memuse/annotate") or self.command != "POST":
            self._send_json(404, {"error": {"message": "unknown control path"}})
            return
        try:
            req = json.loads(body)
            result = self.server.recorder.annotate(str(req["op"]), dict(req.get("args") or {}))
        except (AnnotationError, ValueError, KeyError, TypeError) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            self._send_json(400, {"error": {"message": msg, "type": "memuse_annotation_error"}})
            return
        self._send_json(200, {"ok": True, "result": result})

    # -- forwarding --------------------------------------------------------------------------
    def _forward(self, body: bytes, role: str, episode: str | None, rest: str) -> None:
        srv = self.server
        kind = api_kind(rest.split("?", 1)[0]) if self.command == "POST" else None
        headers = {
            k: v
            for k, v in self.headers.items()
            if k.lower() not in HOP_BY_HOP and not k.lower().startswith("x-memuse-")
        }
        headers["Accept-Encoding"] = "identity"
        headers["Content-Length"] = str(len(body))
        target = f"{srv.upstream.base}/{rest}"
        ctx = None
        try:
            # Send first, then record while the upstream works: the recorder's parsing stays off
            # the critical path. The caller cannot send its next request before our answer, so
            # the recorded order of calls and annotations is unaffected.
            conn = self._send_upstream(target, body, headers)
            ctx = self._begin(kind, role, episode, body)
            resp = self._response(conn, target, body, headers)
        except (OSError, http.client.HTTPException) as e:
            reason = f"upstream unreachable: {type(e).__name__}: {e}"
            ctx = ctx or self._begin(kind, role, episode, body)
            if ctx is not None:
                srv.recorder.end_call(ctx, status="error", parsed=None, error=reason)
            status = 504 if isinstance(e, TimeoutError) else 502
            self._send_json(status, {"error": {"message": reason, "type": "memuse_proxy_error"}})
            return
        self._relay(resp, ctx, kind)

    def _begin(self, kind: str | None, role: str, episode: str | None, body: bytes) -> Any:
        if kind is None:
            return None
        try:
            return self.server.recorder.begin_call(
                role=role,
                kind=kind,
                body=body,
                episode_hint=episode or self.headers.get(EPISODE_HEADER),
                op_ref=self.headers.get(OP_HEADER),
            )
        except Exception:
            sys.stderr.write("proxy: could not record request\n" + traceback.format_exc(limit=3))
            return None

    def _send_upstream(self, target: str, body: bytes, headers: dict[str, str]) -> http.client.HTTPConnection:
        up = self.server.upstream
        try:
            conn = up.connection()
            conn.request(self.command, target, body=body or None, headers=headers)
        except (BrokenPipeError, ConnectionResetError, http.client.HTTPException):
            # A kept-alive connection the upstream closed meanwhile: once more on a new one.
            conn = up.connection(fresh=True)
            conn.request(self.command, target, body=body or None, headers=headers)
        return conn

    def _response(
        self, conn: http.client.HTTPConnection, target: str, body: bytes, headers: dict[str, str]
    ) -> http.client.HTTPResponse:
        try:
            return conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            # The upstream dropped a kept-alive connection without answering: resend once.
            conn = self.server.upstream.connection(fresh=True)
            conn.request(self.command, target, body=body or None, headers=headers)
            return conn.getresponse()

    def _relay(self, resp: http.client.HTTPResponse, ctx: Any, kind: str | None) -> None:
        srv = self.server
        ctype = resp.getheader("Content-Type") or ""
        streaming = "text/event-stream" in ctype
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP_BY_HOP:
                self.send_header(k, v)
        if not streaming:
            try:
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                srv.upstream.drop()
                self.send_header("Content-Length", "0")
                self.end_headers()
                if ctx is not None:
                    srv.recorder.end_call(
                        ctx,
                        status="incomplete",
                        parsed=None,
                        http_status=resp.status,
                        error=f"upstream body cut off: {type(e).__name__}",
                    )
                return
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if ctx is not None:
                # Recorded before the client sees the body, so the host's next annotation or call
                # (a tool result, the next step) always comes after this call in the log.
                ok = 200 <= resp.status < 300
                parsed = parse_json_response(kind or "", data) if ok else None
                err = None if ok else data[:20000].decode("utf-8", "replace")
                srv.recorder.end_call(
                    ctx, status="ok" if ok else "error", parsed=parsed, http_status=resp.status, error=err
                )
            if self._write(data):
                self.close_connection = True
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        asm = StreamAssembler(kind or "")
        gone = cut = False
        try:
            while True:
                chunk = resp.read1(65536)
                if not chunk:
                    break
                asm.feed(chunk)
                if self._write(b"%x\r\n%s\r\n" % (len(chunk), chunk)):
                    gone = True
                    break
        except (OSError, http.client.HTTPException):
            cut = True
        if gone or cut:
            srv.upstream.drop()
            self.close_connection = True
        if ctx is not None:
            ok = 200 <= resp.status < 300
            complete = ok and not gone and not cut and (asm.done or kind not in ("responses",))
            status = "ok" if complete else ("error" if not ok else "incomplete")
            extra: dict[str, Any] = {"streamed": True}
            if gone:
                extra["client_disconnected"] = True
            if cut:
                extra["upstream_cut"] = True
            srv.recorder.end_call(
                ctx, status=status, parsed=asm.result(), http_status=resp.status, extra=extra
            )
        if not gone:
            self._write(b"0\r\n\r\n")

    def _write(self, data: bytes) -> bool:
        """Write to the client; True when the client has gone away."""
        try:
            self.wfile.write(data)
            self.wfile.flush()
            return False
        except OSError:  # broken pipe, reset, timeout
            return True


def serve(
    recorder: Recorder, upstream: str, *, host: str = "127.0.0.1", port: int = 0, quiet: bool = True
) -> RecordingProxy:
    """Start a recording proxy in a background thread and return it (`proxy.url`, `proxy.stop()`)."""
    return RecordingProxy(recorder, upstream, host=host, port=port, quiet=quiet).start()


def wait_until_up(url: str, timeout: float = 10.0) -> None:
    """Block until a proxy answers its health check (for scripts that start one as a process)."""
    u = urlsplit(url)
    deadline = time.time() + timeout
    while True:
        try:
            c = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port or 80, timeout=1)
            c.request("GET", "/_memuse/health")
            if c.getresponse().status == 200:
                return
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)
