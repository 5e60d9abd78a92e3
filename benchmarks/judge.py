"""Judge benchmarks (printed, not a test): rules-judge throughput on the demo corpus, LLM-loop
overhead against the scripted server, calls per span and mandatory-evidence size.

    .venv/bin/python benchmarks/judge.py --db DEMO.duckdb [--rules-only] [--latency 1.0] [--concurrency 32]
    .venv/bin/python benchmarks/judge.py --make-demo 1000 --db /tmp/demo1000.duckdb --rules-only

The database must hold a built demo corpus (`memuse demo --db ...`, or `--make-demo N` builds one
at --db, which must not exist); it is copied, never modified. There is no default database: the
benchmark never touches the app's store. Target: the CLI `memuse judge --judge rules`
from start to exit at >= 200 spans/s on 2 idle cores; the preflight adds < 1 s. On a shared
machine read the CLI's CPU seconds (printed under each CLI row) beside its wall time: with the
default two workers the wall time on 2 idle cores is about half the CPU seconds plus the parent's
serial start (imports, journal replay, span selection).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import host

from memuse_core.judge.agreement import planted_agreement
from memuse_core.judge.batch import load_chunk
from memuse_core.judge.llm import judge_llm, make_client
from memuse_core.judge.package import build_package
from memuse_core.judge.result import JudgeSettings, Prompts
from memuse_core.judge.rules import judge_rules
from memuse_core.judge.runner import run_batch
from memuse_core.judge.scripted_server import Script
from memuse_core.judge.validate import mandatory_chars
from memuse_core.store import connect
from memuse_core.store.judging import eligible_span_ids


def _copy(db: Path, tmp: Path) -> Path:
    out = tmp / "bench.duckdb"
    shutil.copy(db, out)
    return out


def _load(db: Path):
    con = connect(db, read_only=True)
    try:
        pairs = eligible_span_ids(con)
    finally:
        con.close()
    t0 = time.perf_counter()
    items = load_chunk(db, pairs)
    return items, time.perf_counter() - t0


def bench_rules(db: Path, tmp: Path) -> None:
    import gc

    items, load_s = _load(db)
    gc.freeze()  # as the batch runner does per chunk: the loaded records are not garbage
    t0 = time.perf_counter()
    pkgs = [build_package(ev, span) for ev, span in items]
    pkg_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    res = [judge_rules(p) for p in pkgs]
    judge_s, judge_cpu = time.perf_counter() - t0, time.process_time() - c0
    n = len(pkgs)
    acc = sum(r.status == "accepted" for r in res)
    mand = [mandatory_chars(p) / 4 for p in pkgs]
    del items, pkgs, res
    gc.unfreeze()
    gc.collect()
    copy = _copy(db, tmp)
    t0 = time.perf_counter()
    summary = run_batch(copy, JudgeSettings(judge="rules"))
    e2e = time.perf_counter() - t0
    print(f"## Rules judge on the demo corpus ({host.describe()})")
    print(f"spans {n}, accepted {acc}")
    print("| stage | seconds | spans/s |\n|---|---|---|")
    print(f"| load from DuckDB and render steps (evidence loader) | {load_s:.2f} | {n / load_s:.0f} |")
    print(f"| package build | {pkg_s:.2f} | {n / pkg_s:.0f} |")
    print(f"| rules judge (reads + assessment + checks + verdict) | {judge_s:.2f} | {n / judge_s:.0f} |")
    print(f"| rules judge, CPU seconds of this process | {judge_cpu:.2f} | {n / judge_cpu:.0f} |")
    print(f"| package + judge | {pkg_s + judge_s:.2f} | {n / (pkg_s + judge_s):.0f} |")
    print(
        f"| end to end `run_batch` in this process (open, load, judge, journal, write; step parses cached by "
        f"the stages above) | {e2e:.2f} | {summary.judged / e2e:.0f} |"
    )
    # The CLI in fresh processes (no caches warmed by the in-process runs above: forked workers
    # would inherit them), on fresh copies: single-process, then the default (one worker per core).
    for label, extra in (("--workers 1", ["--workers", "1"]), (f"default ({os.cpu_count()} cores)", [])):
        cli_db = tmp / f"bench_cli{len(extra)}.duckdb"
        shutil.copy(db, cli_db)
        cli = [sys.executable, "-m", "memuse_core", "judge", "--db", str(cli_db), "--judge", "rules", *extra]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cli, capture_output=True, text=True)
        cli_s = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"memuse judge failed: {proc.stderr.strip()}")
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        print(
            f"| CLI `memuse judge --judge rules` {label}, process start to exit "
            f"(load average {os.getloadavg()[0]:.1f}) | {cli_s:.2f} | {n / cli_s:.0f} |"
        )
        print(
            f"| the same CLI run: CPU seconds of all its processes (user + system; less sensitive to other "
            f"load than wall time) | {cpu:.2f} | {n / cpu:.0f} per CPU-second |"
        )
    print(
        f"mandatory evidence: mean {statistics.mean(mand):.0f} tokens, median {statistics.median(mand):.0f}, "
        f"max {max(mand):.0f} (chars/4)"
    )
    print("\n## Rules judge agreement with the planted truth")
    print("| signal | agree | n | rate |\n|---|---|---|---|")
    for a in planted_agreement(copy, "rules"):
        print(f"| {a.signal} | {a.agree} | {a.n} | {a.rate:.3f} |")


def _free_port() -> int:
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return int(sk.getsockname()[1])


@contextmanager
def scripted_process(latency: float, tmp: Path):
    """The scripted server in its own process (its CPU is not charged to the judge loop)."""
    script = tmp / "script.json"
    script.write_text(
        Script(read_unshown_first=True, answer_overrides={"influence": "none"}).model_dump_json()
    )
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memuse_core.judge.scripted_server",
            "--script",
            str(script),
            "--port",
            str(port),
            "--latency",
            str(latency),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # ready line
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait()


def bench_llm(db: Path, latency: float, concurrency: int, n_max: int, tmp: Path) -> None:
    items, _ = _load(db)
    items = items[:n_max]
    print(f"\n## LLM loop against the scripted server (latency {latency:.1f} s, concurrency {concurrency})")
    print(f"(load average {os.getloadavg()[0]:.1f}; server in its own process)")
    print(
        "| what runs | spans | calls/span | wall s | ideal s | throughput vs ideal | mean call s | loop CPU ms/call | "
        "follow-up spans | cached share |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    for inline in (48_000, 0):
        pkgs = [build_package(ev, span) for ev, span in items]
        with scripted_process(latency, tmp) as base_url:
            s = JudgeSettings(judge="llm", model="scripted", base_url=base_url, inline_chars=inline)
            res, wall, cpu = asyncio.run(_judge_all(pkgs, s, concurrency))
        calls = sum(r.calls for r in res)
        ideal = calls * latency / concurrency
        inp = sum(r.input_tokens for r in res)
        cached = sum(r.cached_tokens for r in res)
        acc = sum(r.status == "accepted" for r in res)
        fu = sum(r.followups > 0 for r in res)
        per_call = cpu / calls
        secs = [e["seconds"] for r in res for e in r.transcript["log"] if "seconds" in e]
        print(
            f"| loop only, inline budget {inline:,} chars | {len(pkgs)} ({acc} accepted) | {calls / len(pkgs):.2f} | "
            f"{wall:.2f} | {ideal:.2f} | {ideal / wall:.1%} | {statistics.mean(secs):.3f} | {1000 * per_call:.1f} | "
            f"{fu} | {cached / inp:.1%} |"
        )


async def _judge_all(pkgs, s: JudgeSettings, concurrency: int):
    prompts = Prompts.load()
    client = make_client(s)
    sem = asyncio.Semaphore(concurrency)

    async def one(p):
        async with sem:
            return await judge_llm(p, client, s, prompts)

    try:
        t0, c0 = time.perf_counter(), time.process_time()
        out = await asyncio.gather(*(one(p) for p in pkgs))
        return out, time.perf_counter() - t0, time.process_time() - c0
    finally:
        await client.close()


def bench_llm_batch(db: Path, latency: float, concurrency: int, n_max: int, tmp: Path, workers: int) -> None:
    """What `memuse judge --judge llm --concurrency C [--workers N]` does, end to end on a copy of
    the store: prepare, load and package chunks, call, journal, write; timed from start to finish."""
    import json

    from memuse_core.store.journal import journal_path

    copy = tmp / f"batch{workers}.duckdb"
    shutil.copy(db, copy)
    with scripted_process(latency, tmp) as url:
        s = JudgeSettings(judge="llm", model="scripted", base_url=url)
        t0 = time.perf_counter()
        sm = run_batch(copy, s, concurrency=concurrency, limit=n_max, workers=workers)
        wall = time.perf_counter() - t0
    secs = []
    with open(journal_path(copy), encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line).get("result") or {}
            if r.get("judge") == "llm":
                secs += [e["seconds"] for e in r["transcript"]["log"] if "seconds" in e]
    ideal = sm.calls * latency / concurrency
    print(
        f"| `run_batch`, {workers} process{'es' if workers > 1 else ''} | {sm.judged} ({sm.accepted} accepted) | "
        f"{sm.calls / max(1, sm.judged):.2f} | {wall:.2f} | {ideal:.2f} | {ideal / wall:.1%} | "
        f"{statistics.mean(secs):.3f} | | {sm.followup_spans} | {sm.cached_tokens / max(1, sm.input_tokens):.1%} |"
    )


def bench_preflight(tmp: Path, repeats: int = 5) -> None:
    """Seconds the preflight (one minimal call with the batch's model and tools) adds to an LLM
    batch, against the scripted local server (latency 0)."""
    from memuse_core.judge.endpoint import preflight

    with scripted_process(0.0, tmp) as url:
        s = JudgeSettings(judge="llm", model="scripted", base_url=url)
        secs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            preflight(s)
            secs.append(time.perf_counter() - t0)
    print(
        f"\n## Preflight against the scripted server (load average {os.getloadavg()[0]:.1f})\n"
        f"first {secs[0]:.3f} s (client start included), median {statistics.median(secs):.3f} s, "
        f"max {max(secs):.3f} s over {repeats} (target < 1 s)"
    )


def _footnote() -> None:
    print(
        "ideal = calls x latency / concurrency (every slot busy all the time). `loop only` times the judge loop "
        "over prebuilt packages; `run_batch` is the whole command (prepare, load, package, call, journal, "
        "write). A few seconds of tail (the last spans' follow-up calls at low concurrency) are inherent: use "
        "--llm-spans >= 640 for a steady-state figure."
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", type=Path, required=True, help="a built demo store (copied, never modified)")
    ap.add_argument("--make-demo", type=int, default=0, help="first build an N-episode demo at --db")
    ap.add_argument("--rules-only", action="store_true", help="rules judge and preflight only")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--llm-spans", type=int, default=640)
    a = ap.parse_args()
    if a.make_demo:
        from memuse_core.demo import DemoPlan, build_demo

        if a.db.exists():
            raise SystemExit(f"{a.db} exists; --make-demo writes a new store")
        t0 = time.perf_counter()
        build_demo(a.db, DemoPlan(episodes=a.make_demo, seed=7), build_context=True)
        print(f"built a {a.make_demo}-episode demo at {a.db} in {time.perf_counter() - t0:.0f} s")
    with tempfile.TemporaryDirectory() as tmp:
        bench_rules(a.db, Path(tmp))
        bench_preflight(Path(tmp))
        if a.rules_only:
            return
        bench_llm(a.db, a.latency, a.concurrency, a.llm_spans, Path(tmp))
        for workers in (1, 2):
            bench_llm_batch(a.db, a.latency, a.concurrency, a.llm_spans, Path(tmp), workers)
        _footnote()


if __name__ == "__main__":
    main()
