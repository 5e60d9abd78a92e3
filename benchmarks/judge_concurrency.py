"""LLM-batch wall time across chunk boundaries and under a failing store write (printed, not a
test; the tests assert the behaviour with barriers and events, this measures the time).

    .venv/bin/python benchmarks/judge_concurrency.py [--episodes 24] [--concurrency 6] [--latency 0.15]

1. Slots busy across chunk boundaries: one-call spans over several chunks (8, 16, ... episodes)
   against a scripted endpoint that holds each request `--latency` s. With no drain at a chunk
   boundary the batch needs ceil(spans / concurrency) rounds; the table shows measured vs ideal.
2. A failing store write: the writer's first write is due after 2 s (`_Writer.every`); the table
   shows how many spans were judged before the batch stopped (about 2 s / latency at concurrency 1).

Timings on a shared machine are noisy; run it on an idle one.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import threading
import time
from pathlib import Path

from memuse_core.judge.examples import acted_on_episode, ignored_episode, write_store
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import BatchSummary, _prepare, _run_llm, _Writer, run_batch
from memuse_core.judge.scripted_server import Script, ScriptedReply, ScriptedServer


def bench_slots(tmp: Path, episodes: int, concurrency: int, latency: float) -> None:
    fns = (acted_on_episode, ignored_episode)
    eps = [fns[i % 2](f"e{i}") for i in range(episodes)]
    db = write_store(tmp / "slots", eps)
    live, peak, lock = [0], [0], threading.Lock()

    def reply(body, idx):  # type: ignore[no-untyped-def]
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(latency)
        with lock:
            live[0] -= 1
        return ScriptedReply(answer="auto")

    with ScriptedServer(reply) as srv:
        s = JudgeSettings(judge="llm", model="scripted", base_url=srv.base_url)
        t0 = time.perf_counter()
        summary = run_batch(db, s, concurrency=concurrency)
        wall = time.perf_counter() - t0
    ideal = math.ceil(summary.planned / concurrency) * latency
    print(f"{'spans':>6} {'conc':>5} {'peak':>5} {'wall s':>8} {'ideal s':>8} {'overhead s':>11}")
    print(
        f"{summary.judged:>6} {concurrency:>5} {peak[0]:>5} {wall:>8.2f} {ideal:>8.2f} {wall - ideal:>11.2f}"
    )


def bench_failed_write(tmp: Path, latency: float) -> None:
    class DiskFull(_Writer):
        def write(self, results):  # type: ignore[no-untyped-def]
            raise OSError("disk full")

    db = write_store(tmp / "fail", [acted_on_episode(f"a{i}") for i in range(12)])
    with ScriptedServer(Script(), latency=latency) as srv:
        s = JudgeSettings(judge="llm", model="scripted", base_url=srv.base_url)
        summary = BatchSummary(batch_id="b1", judge="llm")
        todo = _prepare(db, s, None, None, summary)
        writer = DiskFull(db)
        t0 = time.perf_counter()
        try:
            asyncio.run(_run_llm(db, s, todo, writer, summary, 1, None, None))
        except OSError:
            pass
        wall = time.perf_counter() - t0
        writer.journal.close()
    print(
        f"failing write: {summary.judged} of {len(todo)} spans judged before the batch stopped "
        f"({wall:.2f} s; first write due after {writer.every:.1f} s, latency {latency} s per call)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=24)
    ap.add_argument("--concurrency", type=int, default=6)
    ap.add_argument("--latency", type=float, default=0.15, help="Seconds the endpoint holds each request.")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "slots").mkdir()
        (tmp / "fail").mkdir()
        bench_slots(tmp, args.episodes, args.concurrency, args.latency)
        bench_failed_write(tmp, 0.6)


if __name__ == "__main__":
    main()
