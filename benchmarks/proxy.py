"""Recording-proxy overhead per request, excluding upstream time.

A scripted chat-completions upstream (its own process) answers at once; each round sends the same
~200 KB agent request (a growing history, as a harness resends it) once straight to the upstream
and once through `memuse record proxy` (its own process), in alternating order, on kept-alive
connections. The overhead of a round is (time through the proxy) - (time direct): the extra hop,
forwarding, parsing, proof/diff work and the event write. Also reported: the recorder's own time
per call (begin_call + end_call) measured in process without HTTP.

Then the load runs: `--load` small chat requests (default 1,400), each on a fresh
connection, from `--concurrency` client threads (default 20 and 50), first straight to the upstream
and then through the proxy. Printed per run: requests, answered 200, connection resets, other
errors, p50/p99 latency, the p50/p99 overhead (proxy minus direct) and the calls the proxy
recorded. On a shared machine the latencies are noisy; resets and recorded counts are not.

    .venv/bin/python benchmarks/proxy.py [--rounds 200] [--kb 200] [--full-requests]
                                         [--load 1400] [--concurrency 20,50] [--keep-alive]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memuse_core.record import Recorder, wait_until_up  # noqa: E402
from memuse_core.record.load import LoadResult, chat_bodies, hammer  # noqa: E402
from memuse_core.record.wire import CHAT, parse_json_response  # noqa: E402

UPSTREAM = (
    "import sys, time; sys.path.insert(0, {root!r});"
    "from memuse_core.record.scripted_upstream import ScriptedUpstream;"
    "u = ScriptedUpstream(lambda b: {{'content': 'ok'}}).start(); print(u.url, flush=True); time.sleep(3600)"
)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def bodies(kb: int, n: int) -> list[bytes]:
    """n agent requests of about `kb` KB: one history growing by a message per call."""
    chunk = "x" * 4000 + "\n"
    history = [{"role": "system", "content": "You are a benchmark agent. " + chunk}]
    while len(json.dumps(history)) < kb * 1000:
        history.append({"role": "assistant", "content": "thinking " + chunk})
        history.append({"role": "user", "content": "observation " + chunk})
    out = []
    for i in range(n):
        history.append({"role": "user", "content": f"step {i}"})
        out.append(json.dumps({"model": "m", "messages": history}).encode())
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def recorder_work(reqs: list[bytes], reply: bytes, delta: bool) -> list[float]:
    """The recorder's own CPU time per call (begin_call + end_call), without HTTP."""
    with tempfile.TemporaryDirectory() as d:
        rec = Recorder(Path(d) / "work.jsonl", delta=delta)
        rec.start_episode(task_id="bench", task="benchmark")
        times = []
        for body in reqs:
            t = time.thread_time()
            ctx = rec.begin_call(role="agent", kind=CHAT, body=body)
            rec.end_call(ctx, status="ok", parsed=parse_json_response(CHAT, reply), http_status=200)
            times.append(time.thread_time() - t)
        rec.close()
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--kb", type=int, default=200)
    ap.add_argument(
        "--full-requests",
        dest="delta",
        action="store_false",
        help="run the proxy with --full-requests (default: delta-encoded requests)",
    )
    ap.add_argument("--load", type=int, default=1400, help="requests per load run (0: no load runs)")
    ap.add_argument("--concurrency", default="20,50", help="client threads of the load runs, comma-separated")
    ap.add_argument("--keep-alive", action="store_true", help="load runs reuse connections (default: fresh)")
    args = ap.parse_args()
    reqs = bodies(args.kb, args.rounds + 10)
    up = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM.format(root=str(ROOT))], stdout=subprocess.PIPE, text=True
    )
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "bench.jsonl"
        try:
            up_url = up.stdout.readline().strip()  # type: ignore[union-attr]
            px = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "memuse_core",
                    "record",
                    "proxy",
                    "--upstream",
                    up_url,
                    "--out",
                    str(out),
                    "--port",
                    str(port),
                    *([] if args.delta else ["--full-requests"]),
                ],
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
            )
            px_url = f"http://127.0.0.1:{port}"
            wait_until_up(px_url, timeout=60)
            direct, via = [], []
            cpu0 = 0.0
            hdr = {"Content-Type": "application/json", "Authorization": "Bearer bench"}
            with httpx.Client(timeout=30) as c1, httpx.Client(timeout=30) as c2:
                for i, body in enumerate(reqs):
                    if i == 10:
                        cpu0 = cpu_seconds(px.pid)
                    order = [
                        ("d", c1, f"{up_url}/chat/completions"),
                        ("p", c2, f"{px_url}/agent/v1/chat/completions"),
                    ]
                    if i % 2:
                        order.reverse()
                    for tag, client, url in order:
                        t = time.perf_counter()
                        r = client.post(url, content=body, headers=hdr)
                        dt = time.perf_counter() - t
                        assert r.status_code == 200
                        if i >= 10:  # warm-up rounds excluded
                            (direct if tag == "d" else via).append(dt)
                    reply = r.content
            proxy_cpu = (cpu_seconds(px.pid) - cpu0) / max(1, len(reqs) - 10)
            loads = []
            for conc in [int(c) for c in args.concurrency.split(",") if c.strip()] if args.load else []:
                load_bodies = chat_bodies(args.load, tag=f"c{conc}")
                fresh = not args.keep_alive
                d_res = hammer(
                    f"{up_url}/chat/completions", load_bodies, concurrency=conc, fresh_connections=fresh
                )
                n0 = out.read_text().count('"type":"model_call"')
                p_res = hammer(
                    f"{px_url}/agent/v1/chat/completions",
                    load_bodies,
                    concurrency=conc,
                    fresh_connections=fresh,
                )
                recorded = out.read_text().count('"type":"model_call"') - n0
                loads.append((conc, d_res, p_res, recorded))
        finally:
            for p in ("px", "up"):
                proc = locals().get(p)
                if proc is not None:
                    proc.terminate()
                    proc.wait(timeout=10)
        lines = out.read_text().count("\n") if out.exists() else 0
    own = recorder_work(reqs, reply, args.delta)[10:]
    over = [v - d_ for v, d_ in zip(via, direct)]
    ms = 1000.0
    print(
        f"request body {len(reqs[-1]) / 1000:.0f} KB, {len(over)} rounds, {lines} event lines written"
        f" ({'delta-encoded' if args.delta else 'full'} requests)"
    )
    print(f"{'measure':<38}{'p50 ms':>10}{'p95 ms':>10}")
    for name, xs in (
        ("direct to upstream", direct),
        ("through the recording proxy", via),
        ("proxy overhead (paired difference)", over),
        ("recorder CPU per call (no HTTP)", own),
    ):
        print(f"{name:<38}{pct(xs, 50) * ms:>10.2f}{pct(xs, 95) * ms:>10.2f}")
    print(f"proxy process CPU per request (mean) {proxy_cpu * ms:.2f} ms")
    print(f"mean overhead {statistics.mean(over) * ms:.2f} ms; load average {os.getloadavg()[0]:.1f}")
    for conc, d_res, p_res, recorded in loads:
        print_load(conc, d_res, p_res, recorded, keep_alive=args.keep_alive)


def print_load(conc: int, direct: LoadResult, via: LoadResult, recorded: int, *, keep_alive: bool) -> None:
    ms = 1000.0
    conn = "kept-alive connections" if keep_alive else "a fresh connection per request"
    print(f"\nload: {via.requests} requests at concurrency {conc}, {conn}")
    print(
        f"{'target':<10}{'requests':>10}{'200':>7}{'resets':>8}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}{'req/s':>8}"
    )
    for name, r in (("direct", direct), ("proxy", via)):
        print(
            f"{name:<10}{r.requests:>10}{r.statuses.get(200, 0):>7}{r.resets:>8}{len(r.errors) - r.resets:>8}"
            f"{r.percentile(50) * ms:>9.2f}{r.percentile(99) * ms:>9.2f}{r.requests / r.wall:>8.0f}"
        )
    d50, d99 = (
        (via.percentile(50) - direct.percentile(50)) * ms,
        (via.percentile(99) - direct.percentile(99)) * ms,
    )
    print(f"overhead p50 {d50:.2f} ms, p99 {d99:.2f} ms; calls recorded {recorded} of {via.requests}")
    for e in via.errors[:3]:
        print(f"  {e}")


if __name__ == "__main__":
    main()
