"""The judging loops of a batch (DESIGN.md "Judging"; MemUse A.3.2): the rules judge over chunks of
spans in this process, and the LLM judge as a pipeline of concurrent calls. The batch runner
(`judge.runner`) and each worker process (`judge.workers`) run them.
"""

from __future__ import annotations

import gc
import signal
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..rules.judgment import JudgmentResult
from ..rules.models import SpanContext
from .batch import BatchSummary, CircuitBreaker, ResultWriter, chunks, load_chunk
from .evidence import EpisodeEvidence
from .package import build_package
from .result import JudgeSettings, Prompts
from .rules import judge_rules

if TYPE_CHECKING:  # the rules judge never loads asyncio (run_llm imports it)
    import asyncio

Progress = Callable[[BatchSummary], None]
JUDGE_GC_GEN0 = 20_000
"""Allocations between collections of the youngest generation while the rules judge runs."""


def run_rules(
    db: Any,
    settings: JudgeSettings,
    todo: list[tuple[str, str]],
    writer: ResultWriter,
    summary: BatchSummary,
    progress: Progress | None,
    external_stop: Any = None,
    on_result: Callable[[JudgmentResult], None] | None = None,
    parts: Iterable[list[tuple[str, str]]] | None = None,
) -> str:
    """Judge `todo` with the rules judge in this process; returns done / stopped.

    Episodes are loaded a chunk at a time (one query per table per chunk); all spans of an
    episode share one rendering of its steps (`store.evidence`). `parts` gives the chunks instead
    (a worker process takes them from the batch's shared queue)."""
    for chunk in chunks(todo) if parts is None else parts:
        if external_stop is not None and external_stop.is_set():
            return "stopped"
        # The chunk's records are a large, long-lived, acyclic heap: the collector stays off while
        # it is built and it is frozen before collection resumes, so neither the first collection
        # after loading nor the ones the judge's temporaries trigger walk it (~5% of the batch).
        was = gc.isenabled()
        gc.disable()
        try:
            loaded = load_chunk(db, chunk)
            gc.freeze()
        finally:
            if was:
                gc.enable()
        # The judge's temporaries are freed by reference counting (few cycles): the youngest
        # generation is collected every JUDGE_GC_GEN0 allocations instead of every 700 while
        # spans are judged (~300 collections less per 1,700 spans, ~1.5% of the judge's CPU).
        threshold = gc.get_threshold()
        gc.set_threshold(max(threshold[0], JUDGE_GC_GEN0), *threshold[1:])
        try:
            _judge_rules_chunk(loaded, settings, writer, summary, progress, on_result)
        finally:
            gc.set_threshold(*threshold)
            gc.unfreeze()
        # The chunk's results go to the store now, while the other workers are still judging: at
        # the end only the last chunk's results are left to write (the workers end together, so
        # their final writes queue for the store one after the other).
        writer.flush(force=True)
    return "done"


def _judge_rules_chunk(
    loaded: list[tuple[EpisodeEvidence, SpanContext]],
    settings: JudgeSettings,
    writer: ResultWriter,
    summary: BatchSummary,
    progress: Progress | None,
    on_result: Callable[[JudgmentResult], None] | None,
) -> None:
    for ev, span in loaded:
        res = JudgmentResult(span_id=span.span_id, batch_id=summary.batch_id)
        try:
            judge_rules(build_package(ev, span, reference=settings.reference), settings, res)
        except Exception as e:  # a bad span becomes an error span, never a default grade
            res.status, res.reason, res.ended_at = (
                "error",
                f"rules_failure: {type(e).__name__}: {e}",
                time.time(),
            )
        writer.add(res)
        summary.add(res)
        if on_result is not None:
            on_result(res)
        writer.flush()
        if progress:
            progress(summary)


def llm_chunk(db: Any, chunk: list[tuple[str, str]], settings: JudgeSettings) -> list[tuple[str, Any]]:
    """Load a chunk and build its evidence packages (run in a thread, off the event loop).

    Returns (span_id, package or the exception that prevented it), largest package first: big
    spans need the most reads and the slowest replies, so starting them early keeps the last
    seconds of a batch from running at low concurrency (longest-processing-time-first order)."""
    loaded = load_chunk(db, chunk)
    out: list[tuple[int, str, Any]] = []
    for ev, span in loaded:
        try:
            pkg = build_package(ev, span, reference=settings.reference)
            size = sum(len(t) for t in pkg.files.values())
            out.append((size, span.span_id, pkg))
        except Exception as e:  # the span becomes an error span, the batch goes on
            out.append((-1, span.span_id, e))
    out.sort(key=lambda x: -x[0])
    return [(sid, pkg) for _, sid, pkg in out]


async def run_llm(
    db: Any,
    settings: JudgeSettings,
    todo: list[tuple[str, str]],
    writer: ResultWriter,
    summary: BatchSummary,
    concurrency: int,
    max_cost: float | None,
    progress: Progress | None,
    external_stop: Any = None,
    on_result: Callable[[JudgmentResult], None] | None = None,
) -> str:
    """Judge `todo` with the LLM loop at `concurrency` spans in flight; returns done / stopped /
    broken / interrupted (broken: the circuit breaker stopped it, the rest stays pending).

    A pipeline without barriers: the next chunk is loaded (and its packages built) in a thread
    while the current one is judged, and a span starts as soon as any slot frees, so chunk
    boundaries never drain the concurrency."""
    import asyncio

    from .llm import judge_llm, make_client  # lazy: the openai SDK loads only for the LLM judge

    client = make_client(settings)
    prompts = Prompts.load()
    sem = asyncio.Semaphore(max(1, concurrency))
    inflight: dict[str, JudgmentResult] = {}
    running: set[asyncio.Task[None]] = set()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    try:
        loop.add_signal_handler(signal.SIGTERM, lambda: main.cancel() if main else None)
    except (NotImplementedError, RuntimeError):
        pass

    def stopped() -> bool:
        return stop.is_set() or (external_stop is not None and external_stop.is_set())

    flushing: asyncio.Future[None] | None = None
    write_error: list[BaseException] = []
    breaker = CircuitBreaker()
    started = [0]

    def flush_in_background() -> None:
        """At most one transaction in flight, in a thread. A failed write stops the batch: its
        results go back to the pending list (they are in the journal in any case)."""
        nonlocal flushing
        if flushing is not None:
            if not flushing.done():
                return
            flushing = None
        if writer.due() and not write_error:
            batch = writer.take()

            def write() -> None:
                try:
                    writer.write(batch)
                except Exception as e:
                    writer.pending[:0] = batch
                    write_error.append(e)
                    stop.set()

            flushing = asyncio.ensure_future(asyncio.to_thread(write))

    async def one(res: JudgmentResult, pkg: Any) -> None:
        try:
            if isinstance(pkg, Exception):
                raise pkg
            await judge_llm(pkg, client, settings, prompts, res)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            res.status, res.reason, res.ended_at = (
                "error",
                f"judge_failure: {type(e).__name__}: {e}",
                time.time(),
            )
        finally:
            sem.release()
        inflight.pop(res.judgment_id, None)
        writer.add(res)
        summary.add(res)
        if on_result is not None:
            on_result(res)
        flush_in_background()
        if max_cost is not None and summary.cost_usd >= max_cost and not stop.is_set():
            stop.set()
            summary.stopped = f"--max-cost {max_cost} reached (${summary.cost_usd:.4f}); resume to continue"
        if breaker.observe(res.status, res.reason) and not summary.broken:
            stop.set()
            summary.broken = True
            summary.stopped = breaker.message(len(todo) - started[0])
        if progress:
            progress(summary)

    parts = list(chunks(todo, first=8))
    nxt: asyncio.Future[list[tuple[str, Any]]] | None = None
    # The loader and writer threads hold the GIL for CPU work; when a reply arrives, the event
    # loop waits for them to yield it (every 5 ms by default). A shorter interval keeps that wait,
    # which adds to every call's latency, small.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        if parts:
            nxt = asyncio.ensure_future(asyncio.to_thread(llm_chunk, db, parts[0], settings))
        for i in range(len(parts)):
            assert nxt is not None
            work = await nxt
            # The chunk's packages live until its spans are judged: frozen, they are not walked by
            # the collections the loop's temporaries trigger (a full one over every loaded chunk
            # stalled all calls in flight for ~150 ms). Unfrozen when the batch ends.
            gc.freeze()
            nxt = (
                asyncio.ensure_future(asyncio.to_thread(llm_chunk, db, parts[i + 1], settings))
                if i + 1 < len(parts) and not stopped()
                else None
            )
            for span_id, pkg in work:
                await sem.acquire()
                if stopped():
                    sem.release()
                    break
                started[0] += 1
                # in flight from now on: a Ctrl-C before the task first runs still records the
                # span as interrupted
                res = JudgmentResult(span_id=span_id, batch_id=summary.batch_id)
                inflight[res.judgment_id] = res
                task = asyncio.create_task(one(res, pkg))
                running.add(task)
                task.add_done_callback(running.discard)
            if stopped():
                break
        if running:
            await asyncio.gather(*running)
        if flushing is not None:
            await flushing
        if write_error:
            raise write_error[0]
        if summary.broken:
            return "broken"
        return "stopped" if stopped() else "done"
    except (asyncio.CancelledError, KeyboardInterrupt):
        for task in list(running):
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        now = time.time()
        for res in list(inflight.values()):
            res.status, res.reason, res.ended_at = "interrupted", "interrupted by the user", now
            writer.add(res)
            summary.add(res)
            if on_result is not None:
                on_result(res)
        summary.stopped = "interrupted; run the same command again to resume"
        return "interrupted"
    finally:
        sys.setswitchinterval(switch)
        gc.unfreeze()
        if nxt is not None and not nxt.done():
            nxt.cancel()
        try:
            if flushing is not None:
                await flushing  # the caller's final flush writes whatever is still pending
        finally:
            await client.close()
