"""A small concurrent HTTP load driver for the recording proxy (tests and benchmarks/proxy.py).

`hammer` sends a list of request bodies from `concurrency` threads, released together, each on a
fresh TCP connection by default (the hardest case for a server's accept queue: a listen backlog of
5 reset connections under load). Every outcome is classified: an HTTP status, a
connection reset (or a peer that closed without answering), or another error. Standard library
only, so the driver itself adds as little as possible to what it measures.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

RESET_ERRORS = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, http.client.RemoteDisconnected)


@dataclass
class LoadResult:
    """What a load run saw: counts by outcome and the latency of every answered request."""

    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    resets: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    """Seconds from connect (or send, on a kept-alive connection) to the full answer."""
    wall: float = 0.0

    @property
    def ok(self) -> int:
        return sum(n for s, n in self.statuses.items() if 200 <= s < 300)

    def percentile(self, p: float) -> float:
        xs = sorted(self.latencies)
        if not xs:
            return float("nan")
        return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def hammer(
    url: str,
    bodies: list[bytes],
    *,
    concurrency: int,
    fresh_connections: bool = True,
    timeout: float = 60.0,
    headers: dict[str, str] | None = None,
) -> LoadResult:
    """POST every body to `url` from `concurrency` threads; returns the classified outcomes."""
    u = urlsplit(url)
    host, port = u.hostname or "127.0.0.1", u.port or 80
    path = u.path + (f"?{u.query}" if u.query else "")
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    todo = iter(range(len(bodies)))
    take = threading.Lock()
    res = LoadResult(requests=len(bodies))
    out_lock = threading.Lock()
    start = threading.Barrier(concurrency)

    def worker() -> None:
        conn: http.client.HTTPConnection | None = None
        start.wait()
        while True:
            with take:
                i = next(todo, None)
            if i is None:
                break
            t = time.perf_counter()
            try:
                if conn is None or fresh_connections:
                    conn = http.client.HTTPConnection(host, port, timeout=timeout)
                conn.request("POST", path, body=bodies[i], headers=hdrs)
                r = conn.getresponse()
                r.read()
                dt = time.perf_counter() - t
                with out_lock:
                    res.statuses[r.status] += 1
                    res.latencies.append(dt)
                if fresh_connections:
                    conn.close()
            except RESET_ERRORS as e:
                with out_lock:
                    res.resets += 1
                    res.errors.append(f"request {i}: {type(e).__name__}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
            except (OSError, http.client.HTTPException) as e:
                with out_lock:
                    res.errors.append(f"request {i}: {type(e).__name__}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    res.wall = time.perf_counter() - t0
    return res


def chat_bodies(n: int, *, tag: str = "load", pad: int = 600) -> list[bytes]:
    """n small chat-completions bodies, each with a unique marker `<tag>-<i>` in its user message."""
    import json

    filler = "x" * pad
    return [
        json.dumps(
            {
                "model": "m",
                "messages": [
                    {"role": "system", "content": f"You are a load-test agent. {filler}"},
                    {"role": "user", "content": f"{tag}-{i}"},
                ],
            }
        ).encode()
        for i in range(n)
    ]


__all__ = ["LoadResult", "hammer", "chat_bodies", "RESET_ERRORS"]
