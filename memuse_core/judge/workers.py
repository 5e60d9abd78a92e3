"""One batch over several processes (MemUse A.3.2 batch runner).

A single event loop spends a few milliseconds of CPU per model call (request building, JSON,
response parsing), so at high concurrency its CPU, not the endpoint's latency, bounds throughput;
the rules judge is CPU-bound throughout (loading episodes and judging).
`WorkerPool` splits the pending spans by episode over N processes, each running the ordinary loop
of `judge.loops` (LLM: with concurrency/N on its share; rules: `run_rules` on chunks taken from one
shared queue, so the workers stay busy to the end). Each worker writes its own results (journal first, then short
transactions; the store's lock retry serialises them); the parent aggregates progress and cost from
a queue, stops every worker at `--max-cost`, and on Ctrl-C lets each worker record its in-flight
spans as interrupted. A worker whose parent dies (kill -9) stops by itself, so a resumed batch never
races an orphan.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from typing import Any

from .. import crash
from ..rules.judgment import JudgmentResult
from .batch import (
    BatchSummary,
    CircuitBreaker,
    ResultWriter,
    flush_seconds,
    share_store_lock,
    shared_chunks,
)
from .loops import run_llm, run_rules
from .result import JudgeSettings

_LIGHT = (
    "span_id",
    "judgment_id",
    "status",
    "reason",
    "calls",
    "followups",
    "forced",
    "rollbacks",
    "retries",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "cost_usd",
)


RESULTS_BATCH = 64
"""Results per message from a rules worker to the parent (at most)."""
RESULTS_SECONDS = 0.25
"""Seconds a rules worker's finished results may wait before they are sent to the parent."""


def _shards(todo: list[tuple[str, str]], n: int) -> list[list[tuple[str, str]]]:
    """Whole episodes round-robin over n shards (an episode's spans share one rendering)."""
    eps: dict[str, list[tuple[str, str]]] = {}
    for p in todo:
        eps.setdefault(p[1], []).append(p)
    out: list[list[tuple[str, str]]] = [[] for _ in range(n)]
    for i, group in enumerate(eps.values()):
        out[i % n].extend(group)
    return [s for s in out if s]


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _worker(
    db: str,
    settings_json: str,
    shard_q: Any,
    batch_id: str,
    q: Any,
    stop: Any,
    parent: int,
    lock: Any,
    readers: Any,
    work: Any,
) -> None:
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    # the workers take turns at the store instead of polling its file lock (loads share it)
    share_store_lock(lock, readers)
    settings = JudgeSettings.model_validate_json(settings_json)
    # Import the LLM judge (the openai SDK) while the parent prepares the batch; then wait for
    # this worker's share.
    if settings.judge == "llm":
        from . import llm  # noqa: F401

    item = shard_q.get()
    if item is None:  # fewer shards than workers, or the batch was called off
        q.put(("end", "done"))
        return
    shard, concurrency = item  # a rules worker's shard is None: it takes chunks from `work`
    crash.worker_point("judge.worker")
    summary = BatchSummary(batch_id=batch_id, judge=settings.judge)
    writer = ResultWriter(db, flush_seconds(settings.judge))
    status = "done"

    # A rules worker finishes hundreds of spans a second: its results go to the parent in
    # batches (one message per RESULTS_BATCH results or RESULTS_SECONDS, and at the end), not one
    # message each. They cost nothing and never fail for transport, so the parent's --max-cost
    # and circuit breaker have nothing to react to sooner; an LLM worker still reports each one.
    light: list[dict[str, Any]] = []
    sent = [time.monotonic()]
    per_result = settings.judge != "rules"

    def send_results() -> None:
        if light:
            q.put(("results", light[:]))
            light.clear()
        sent[0] = time.monotonic()

    def on_result(r: JudgmentResult) -> None:
        if per_result:
            q.put(("result", {k: getattr(r, k) for k in _LIGHT}))
            return
        light.append({k: getattr(r, k) for k in _LIGHT})
        if len(light) >= RESULTS_BATCH or time.monotonic() - sent[0] >= RESULTS_SECONDS:
            send_results()

    try:
        if settings.judge == "rules":
            # SIGTERM (parent's Ctrl-C, or the parent died) stops between spans; the finally
            # below still writes every finished result
            signal.signal(signal.SIGTERM, _raise_interrupt)
            status = run_rules(
                db,
                settings,
                shard or [],
                writer,
                summary,
                None,
                external_stop=stop,
                on_result=on_result,
                parts=iter(work.get, None) if shard is None else None,
            )
        else:
            import asyncio  # the LLM loop only

            status = asyncio.run(
                run_llm(
                    db,
                    settings,
                    shard,
                    writer,
                    summary,
                    concurrency,
                    None,
                    None,
                    external_stop=stop,
                    on_result=on_result,
                )
            )
    except KeyboardInterrupt:
        status = "interrupted"
    except BaseException:
        status = "failed"  # the parent reports it; the traceback goes to stderr
        raise
    finally:
        send_results()
        writer.close()
        q.put(("end", status))


def start_method() -> str:
    """How worker processes start: "fork" when this process has a single thread and the platform
    forks (the workers inherit every imported module, so they start judging at once), otherwise
    "spawn" (a fresh interpreter that imports the judge; safe under the app's threads)."""
    if "fork" in mp.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


class WorkerPool:
    """Worker processes; `run` hands each its share, `cancel` sends them home.

    Spawned workers are started before the batch is prepared, so their imports overlap the
    parent's journal replay and span selection; forked ones after it (they start instantly). The
    parent holds no store connection and no open journal while it forks."""

    def __init__(
        self, db: Any, settings: JudgeSettings, workers: int, batch_id: str, method: str = "spawn"
    ) -> None:
        ctx: Any = mp.get_context(method)
        self.judge = settings.judge
        self.q = ctx.Queue()
        self.stop = ctx.Event()
        self.shard_qs = [ctx.Queue() for _ in range(workers)]
        self.lock = lock = ctx.Lock()  # held here until the workers end: spawned ones reopen it by name
        self.readers = ctx.Value("i", 0)
        self.work = ctx.Queue()
        """Chunks of a rules batch, taken by whichever worker is free (`batch.shared_chunks`)."""
        self.procs = [
            ctx.Process(
                target=_worker,
                args=(
                    str(db),
                    settings.model_dump_json(),
                    sq,
                    batch_id,
                    self.q,
                    self.stop,
                    os.getpid(),
                    lock,
                    self.readers,
                    self.work,
                ),
            )
            for sq in self.shard_qs
        ]
        # Forked workers inherit the parent's heap (modules, regexes, settings): frozen first, so
        # their collections never walk it (a walk writes to every object's header and copies
        # each page it touches).
        frozen = method == "fork"
        if frozen:
            gc.freeze()
        try:
            for p in self.procs:
                p.start()
        finally:
            if frozen:
                gc.unfreeze()

    def cancel(self) -> None:
        for sq in self.shard_qs:
            sq.put(None)
        self._join()

    def _join(self) -> None:
        for p in self.procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
                p.join()

    def run(
        self,
        todo: list[tuple[str, str]],
        summary: Any,
        concurrency: int,
        max_cost: float | None,
        progress: Any,
    ) -> str:
        """Judge `todo` over the workers; returns done / stopped / interrupted."""
        procs, q, stop = self.procs, self.q, self.stop
        if self.judge == "rules":
            # one queue of shrinking chunks: a free worker takes the next (balanced to the end)
            parts = shared_chunks(todo, len(procs))
            for part in parts:
                self.work.put(part)
            for _ in procs:
                self.work.put(None)
            for i, sq in enumerate(self.shard_qs):
                sq.put((None, 1) if i < len(parts) else None)
        else:
            shards = _shards(todo, len(procs))
            per = max(1, concurrency // max(1, len(shards)))
            for i, sq in enumerate(self.shard_qs):
                sq.put((shards[i], per) if i < len(shards) else None)
        ended, statuses = 0, []
        interrupted = False
        breaker = CircuitBreaker()
        seen = 0
        deadline: float | None = None
        while ended < len(procs):
            try:
                kind, payload = q.get(timeout=0.5)
            except queue.Empty:
                if all(not p.is_alive() for p in procs) or (
                    deadline is not None and time.monotonic() > deadline
                ):
                    break
                continue
            except KeyboardInterrupt:  # stop the workers; they record their in-flight spans as interrupted
                interrupted = True
                deadline = time.monotonic() + 60
                stop.set()
                for p in procs:
                    if p.is_alive() and p.pid is not None:
                        os.kill(p.pid, signal.SIGTERM)
                continue
            if kind == "end":
                ended += 1
                statuses.append(payload)
                continue
            for light in payload if kind == "results" else (payload,):
                summary.add(JudgmentResult(**light))
                seen += 1
                if breaker.observe(light["status"], light["reason"]) and not summary.broken:
                    stop.set()
                    summary.broken = True
                    summary.stopped = breaker.message(len(todo) - seen)
                if max_cost is not None and summary.cost_usd >= max_cost and not stop.is_set():
                    stop.set()
                    summary.stopped = (
                        f"--max-cost {max_cost} reached (${summary.cost_usd:.4f}); resume to continue"
                    )
            if progress:
                progress(summary)
        self._join()
        if interrupted or "interrupted" in statuses:
            summary.stopped = "interrupted; run the same command again to resume"
            return "interrupted"
        failed = len(procs) - ended + statuses.count("failed")
        if failed:  # a worker died (killed, out of memory) or raised: its unjudged spans stay pending
            codes = sorted({p.exitcode for p in procs if p.exitcode})
            summary.broken = True
            summary.stopped = (
                f"{failed} of {len(procs)} judge worker processes failed"
                + (f" (exit codes {', '.join(map(str, codes))})" if codes else "")
                + f"; {len(todo) - seen} span(s) left pending; run the same command again to resume"
            )
            return "broken"
        if summary.broken or "broken" in statuses:
            summary.broken = True
            summary.stopped = (
                summary.stopped or "circuit breaker: repeated transport failures; rest left pending"
            )
            return "broken"
        return "stopped" if stop.is_set() else "done"
