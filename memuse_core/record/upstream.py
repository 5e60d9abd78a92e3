"""The recording proxy's side toward the upstream: where to forward and on which connection.

Each proxy thread keeps one kept-alive connection to the upstream. A kept-alive connection the
upstream closed meanwhile fails on send or before any answer; the request then goes once more on
a fresh connection (the upstream never saw it). `forward_headers` is the caller's header set as
forwarded: hop-by-hop and `X-MemUse-*` headers are dropped, Authorization and the rest kept.
"""

from __future__ import annotations

import http.client
import threading
from email.message import Message
from urllib.parse import urlsplit

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


def forward_headers(headers: Message, body: bytes) -> dict[str, str]:
    """The caller's headers as sent upstream (see module docstring)."""
    out = {
        k: v
        for k, v in headers.items()
        if k.lower() not in HOP_BY_HOP and not k.lower().startswith("x-memuse-")
    }
    out["Accept-Encoding"] = "identity"
    out["Content-Length"] = str(len(body))
    return out


class Upstream:
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
        """Close this thread's connection (after a cut-off or abandoned answer)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def send(
        self, method: str, target: str, body: bytes, headers: dict[str, str]
    ) -> http.client.HTTPConnection:
        """Send a request; the connection it went out on, for `response`."""
        try:
            conn = self.connection()
            conn.request(method, target, body=body or None, headers=headers)
        except (BrokenPipeError, ConnectionResetError, http.client.HTTPException):
            # A kept-alive connection the upstream closed meanwhile: once more on a new one.
            conn = self.connection(fresh=True)
            conn.request(method, target, body=body or None, headers=headers)
        return conn

    def response(
        self,
        conn: http.client.HTTPConnection,
        method: str,
        target: str,
        body: bytes,
        headers: dict[str, str],
    ) -> http.client.HTTPResponse:
        """The answer's status and headers (the body is read by the caller)."""
        try:
            return conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            # The upstream dropped a kept-alive connection without answering: resend once.
            conn = self.connection(fresh=True)
            conn.request(method, target, body=body or None, headers=headers)
            return conn.getresponse()
