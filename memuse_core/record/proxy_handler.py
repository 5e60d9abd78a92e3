"""One request through the recording proxy: framing, refusal, the control endpoint, forwarding
and relaying the answer (MemUse 3.2, A.1.1; the routes and guarantees are in `proxy`).

`parse_route` maps a proxied path to (role, explicit episode, API path). `ProxyHandler` serves one
connection of a `RecordingProxy`: it refuses what cannot be framed (`intake.py`), answers
`/_memuse/*` (health, bridge annotations), sends the request upstream before recording it, and
relays the answer (whole or chunk by chunk) while the recorder writes the call.
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import time
import traceback
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from .calls import load_body
from .intake import MAX_HEADER_BYTES, HeadReader, Refused, header_bytes, read_body
from .recorder import ROLES, AnnotationError
from .upstream import HOP_BY_HOP, forward_headers
from .wire import StreamAssembler, api_kind, parse_json_response

if TYPE_CHECKING:
    from .proxy import RecordingProxy

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


class _ClientGone(Exception):
    pass


class ProxyHandler(BaseHTTPRequestHandler):
    """Serves the requests of one client connection (see module docstring)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: RecordingProxy

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if not self.server.quiet:
            sys.stderr.write("proxy: " + (format % args) + "\n")

    def setup(self) -> None:
        super().setup()
        srv = self.server
        self.head = HeadReader(
            self.rfile, self.connection, idle=srv.idle_timeout, read_timeout=srv.read_timeout
        )
        self.rfile = self.head

    def handle_one_request(self) -> None:
        self.head.new_request()
        super().handle_one_request()

    def parse_request(self) -> bool:
        try:
            if not super().parse_request():
                return False
        except TimeoutError:
            self._refuse(Refused(408, "request headers did not arrive within the read timeout"))
            return False
        size = header_bytes(self.headers)
        if size > MAX_HEADER_BYTES:
            self._refuse(
                Refused(431, f"request headers total {size} bytes, over the limit of {MAX_HEADER_BYTES}")
            )
            return False
        return True

    def _refuse(self, e: Refused) -> None:
        """Answer a request the proxy will not forward and close the connection."""
        self.close_connection = True
        self.log_error("refused: %s", e.message)
        try:
            self._send_json(e.status, {"error": {"message": e.message, "type": "memuse_proxy_error"}})
            self.wfile.flush()
            # Closing with unread request bytes makes the kernel send a reset, which can destroy
            # the answer before the client reads it: discard what still arrives, briefly.
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + 0.25
            left = 1 << 20
            while left > 0 and (wait := deadline - time.monotonic()) > 0:
                self.connection.settimeout(wait)
                got = len(self.connection.recv(65536))
                if not got:
                    break
                left -= got
        except OSError:
            pass

    # -- entry points ------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        srv = self.server
        try:
            try:
                body = read_body(
                    self.headers,
                    self.head.inner,
                    self.connection,
                    read_timeout=srv.read_timeout,
                    max_body=srv.max_body,
                )
            except Refused as e:
                self._refuse(e)
                return
            self.connection.settimeout(srv.idle_timeout)
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

    def _send_json(self, status: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
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
            req, why = load_body(body)
            if why is not None:
                raise ValueError(why.replace("request body", "annotation body"))
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
        headers = forward_headers(self.headers, body)
        target = f"{srv.upstream.base}/{rest}"
        ctx = None
        try:
            # Send first, then record while the upstream works: the recorder's parsing stays off
            # the critical path. The caller cannot send its next request before our answer, so
            # the recorded order of calls and annotations is unaffected.
            conn = srv.upstream.send(self.command, target, body, headers)
            ctx = self._begin(kind, role, episode, body)
            resp = srv.upstream.response(conn, self.command, target, body, headers)
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

    def _relay(self, resp: http.client.HTTPResponse, ctx: Any, kind: str | None) -> None:
        srv = self.server
        ctype = resp.getheader("Content-Type") or ""
        streaming = "text/event-stream" in ctype
        # The upstream's own Date and Server headers are relayed; send_response would add ours too.
        self.log_request(resp.status)
        self.send_response_only(resp.status, resp.reason)
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
