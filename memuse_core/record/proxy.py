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
mid-stream leaves an `incomplete` call with what was received so far. A body the recorder cannot
parse (not JSON, or nested too deep) is still forwarded and recorded, unparsed, with the reason.

Hostile or broken clients: a request that cannot be framed (bad `Content-Length`,
oversized headers or body, a body that does not arrive within the read timeout) is refused at once
with a 4xx answer and never recorded (`intake.py`). Connections are accepted from a listen queue of
`request_queue_size` (socketserver's default of 5 reset connections under load), each served by its
own thread; an idle kept-alive connection is closed after `idle_timeout` seconds.
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from ..vocab import MAX_BODY_BYTES
from .proxy_handler import ProxyHandler
from .recorder import Recorder
from .upstream import Upstream


class RecordingProxy(ThreadingHTTPServer):
    """A threading HTTP server that forwards and records (see module docstring)."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024
    """Listen backlog (the kernel caps it at net.core.somaxconn)."""

    def __init__(
        self,
        recorder: Recorder,
        upstream: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout: float = 600.0,
        quiet: bool = True,
        read_timeout: float = 10.0,
        idle_timeout: float = 120.0,
        max_body: int = MAX_BODY_BYTES,
    ):
        self.recorder = recorder
        self.upstream = Upstream(upstream, timeout)
        self.quiet = quiet
        self.read_timeout = read_timeout
        """Longest wait for the next piece of a request's headers or body."""
        self.idle_timeout = idle_timeout
        """Longest wait for the next request on a kept-alive connection (and for a slow client to
        take the answer)."""
        self.max_body = max_body
        super().__init__((host, port), ProxyHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> RecordingProxy:
        """Serve in a daemon thread (for in-process use; `stop()` within 50 ms); returns self."""
        threading.Thread(target=self.serve_forever, args=(0.05,), name="memuse-proxy", daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


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
