"""Batch judging and single-span re-judging (DESIGN.md "Judging", "Concurrency"; MemUse A.3.2).

The runner opens the store per unit of work (load a chunk of spans, write a few results) and closes
it again, so the app can use the database between writes. Every result goes to the journal first
(flushed; fsynced before each commit), then into the tables in one short transaction. A resumed
batch replays the journal and skips spans that already have a final judgment from the same judge
kind, so nothing is lost and nothing is judged twice. Ctrl-C / SIGTERM records in-flight spans as
`interrupted` (they are judged again on resume).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..context.model import SpanContext
from .package import EpisodeEvidence, build_package
from .result import JudgeSettings, JudgmentResult, Prompts

FLUSH_EVERY = 500
"""Results per database transaction at most; pending results are also flushed every
`flush_seconds(judge)` (the journal holds them meanwhile)."""


def flush_seconds(judge: str) -> float:
    """How old pending results may get before a transaction: 2 s for the LLM judge (the app shows
    results as they come), 10 s for the rules judge (hundreds of spans per second; each
    transaction costs a connection and a commit)."""
    return 10.0 if judge == "rules" else 2.0


CHUNK_EPISODES = 200
"""Episodes loaded per store read (one query per table); an episode's spans always share a chunk."""
STORE_LOCK = threading.Lock()
"""DuckDB refuses a read-only and a read-write connection to one file in the same process at
once: the LLM loop's loader and writer threads take turns through this lock."""


@dataclass
class BatchSummary:
    """What a batch did (printed by `memuse judge`)."""

    batch_id: str
    judge: str
    planned: int = 0
    judged: int = 0
    accepted: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    interrupted: int = 0
    followup_spans: int = 0
    forced: int = 0
    rollbacks: int = 0
    retries: int = 0
    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    replayed: int = 0
    auto_neutral: int = 0
    skipped_done: int = 0
    stopped: str | None = None

    def add(self, r: JudgmentResult) -> None:
        if r.status == "interrupted":
            self.interrupted += 1
        else:
            self.judged += 1
            if r.status == "accepted":
                self.accepted += 1
            else:
                self.errors[(r.reason or "error").split(":")[0]] += 1
        self.followup_spans += int(r.followups > 0)
        self.forced += int(r.forced)
        self.rollbacks += r.rollbacks
        self.retries += r.retries
        self.calls += r.calls
        self.input_tokens += r.input_tokens
        self.cached_tokens += r.cached_tokens
        self.output_tokens += r.output_tokens
        self.cost_usd += r.cost_usd

    def lines(self) -> list[str]:
        rate = self.judged / self.seconds if self.seconds > 0 else 0.0
        out = [
            f"judge {self.judge} (batch {self.batch_id}): {self.judged} of {self.planned} spans judged "
            f"in {self.seconds:.1f} s ({rate:.1f} spans/s)",
            f"  accepted {self.accepted}; errors {sum(self.errors.values())}"
            + (
                " (" + ", ".join(f"{k}: {v}" for k, v in self.errors.most_common()) + ")"
                if self.errors
                else ""
            )
            + f"; interrupted {self.interrupted}",
            f"  follow-up spans {self.followup_spans}; forced answers {self.forced}; rollbacks {self.rollbacks}; "
            f"retries {self.retries}",
        ]
        if self.judge == "llm":
            started = self.judged + self.interrupted
            cps = self.calls / started if started else 0.0
            out.append(
                f"  calls {self.calls} ({cps:.2f}/span); input tokens uncached "
                f"{self.input_tokens - self.cached_tokens:,}, cached {self.cached_tokens:,}; output "
                f"{self.output_tokens:,}; cost ${self.cost_usd:.4f}"
            )
        if self.replayed or self.auto_neutral or self.skipped_done:
            out.append(
                f"  journal replayed {self.replayed}; auto-neutral verdicts {self.auto_neutral}; "
                f"already judged {self.skipped_done}"
            )
        if self.stopped:
            out.append(f"  stopped: {self.stopped}")
        if self.planned == 0 and not self.skipped_done:
            out.append(
                "  no eligible spans: build the evaluation context first (`memuse build`), or check "
                "`memuse info`"
            )
        return out


# ----------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------


def _load_chunk(db: Any, pairs: list[tuple[str, str]]) -> list[tuple[EpisodeEvidence, SpanContext]]:
    """The rendered episode evidence and the span contexts of a chunk (`store.evidence`: only the
    rows the step files need, not whole episode records); the file is open only while rows are
    read, so other processes of the batch (and the app) can write between chunks."""
    from ..store import connect
    from ..store.context import _load_spans
    from ..store.evidence import build_evidence, fetch_evidence_rows
    from ..store.reader import _gc_paused

    eps = sorted({e for _, e in pairs})
    wanted = sorted({s for s, _ in pairs})
    with STORE_LOCK:
        con = connect(db, read_only=True)  # readers can share the file with the app
        try:
            with _gc_paused():  # many small acyclic objects (see reader._gc_paused)
                rows = fetch_evidence_rows(con, eps)
                spans = _load_spans(con, "span_id IN (SELECT unnest(?::VARCHAR[]))", wanted)
        finally:
            con.close()
    with _gc_paused():
        evs = build_evidence(rows)
    by_id = {s.span_id: s for s in spans}
    return [(evs[e], by_id[s]) for s, e in pairs if s in by_id and e in evs]


def _chunks(pairs: list[tuple[str, str]], first: int = CHUNK_EPISODES) -> Iterator[list[tuple[str, str]]]:
    """Consecutive groups of whole episodes: `first` episodes, then twice as many each time up to
    CHUNK_EPISODES (a small first chunk lets the LLM loop start calling within a fraction of a
    second while the larger ones load behind it)."""
    cur: list[tuple[str, str]] = []
    eps: set[str] = set()
    size = max(1, min(first, CHUNK_EPISODES))
    for p in pairs:
        if p[1] not in eps and len(eps) >= size:
            yield cur
            cur, eps = [], set()
            size = min(2 * size, CHUNK_EPISODES)
        cur.append(p)
        eps.add(p[1])
    if cur:
        yield cur


class _Writer:
    """Journal first, then short transactions."""

    def __init__(self, db: Any, every: float = 2.0) -> None:
        from ..store.judging import Journal, journal_path

        self.db = db
        self.every = every
        self.journal = Journal(journal_path(db))
        self.pending: list[JudgmentResult] = []
        self.last = time.monotonic()

    def add(self, r: JudgmentResult) -> None:
        self.journal.append(r)
        self.pending.append(r)

    def due(self) -> bool:
        """Enough results, or old enough, to be worth a transaction."""
        return bool(self.pending) and (
            len(self.pending) >= FLUSH_EVERY or time.monotonic() - self.last >= self.every
        )

    def take(self) -> list[JudgmentResult]:
        """Hand the pending results to a writer (the caller writes them with `write`)."""
        out, self.pending = self.pending, []
        self.last = time.monotonic()
        return out

    def write(self, results: list[JudgmentResult], end: tuple[str, str] | None = None) -> None:
        """Sync the journal, then store `results` in one short transaction (thread-safe: the LLM
        loop runs this in a thread so a commit never stalls the requests in flight); `end`
        (batch id, status) also records the batch's end through the same connection."""
        if not results and end is None:
            return
        from ..store import connect
        from ..store.judging import end_batch, write_results

        self.journal.sync()
        with STORE_LOCK:
            con = connect(self.db)
            try:
                if results:
                    write_results(con, results)
                if end is not None:
                    end_batch(con, *end)
            finally:
                con.close()

    def flush(self, force: bool = False) -> None:
        if self.pending and (force or self.due()):
            self.write(self.take())

    def close(self, end: tuple[str, str] | None = None) -> None:
        """Write what is pending (and the batch's end, if given), then close the journal."""
        try:
            self.write(self.take() if self.pending else [], end)
        finally:
            self.journal.close()


def _prepare(
    db: Any,
    settings: JudgeSettings,
    span_ids: list[str] | None,
    limit: int | None,
    summary: BatchSummary,
    rank_by_rules: bool = False,
) -> list[tuple[str, str]]:
    from ..store import connect
    from ..store.judging import (
        done_spans,
        eligible_span_ids,
        replay_journal,
        start_batch,
        write_auto_neutral_verdicts,
    )

    con = connect(db)
    try:
        summary.replayed = replay_journal(con, db)
        summary.auto_neutral = write_auto_neutral_verdicts(con)
        elig = eligible_span_ids(con)
        if span_ids:
            want = set(span_ids)
            todo = [p for p in elig if p[0] in want]
            missing = want - {p[0] for p in todo}
            if missing:
                from ..store.connection import StoreError

                raise StoreError(
                    f"not an eligible span: {sorted(missing)[0]} (see `memuse info`; only eligible "
                    "spans are judged)"
                )
        else:
            done = done_spans(con, settings.judge)
            todo = [p for p in elig if p[0] not in done]
            summary.skipped_done = len(elig) - len(todo)
        if rank_by_rules:
            from ..store.judging import rules_ranks

            ranks = rules_ranks(con)
            todo.sort(key=lambda p: ranks.get(p[0], 4))  # stable: episode order within a rank
        if limit is not None:
            todo = todo[:limit]
        start_batch(con, summary.batch_id, settings.judge, settings.model, settings.public())
    finally:
        con.close()
    summary.planned = len(todo)
    return todo


Progress = Callable[[BatchSummary], None]

AUTO_WORKER_SPANS = 100
"""Smallest rules batch that `workers=None` splits over the cores (below it one process is as fast)."""


def run_batch(
    db: Any,
    settings: JudgeSettings,
    *,
    span_ids: list[str] | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    max_cost: float | None = None,
    progress: Progress | None = None,
    rank_by_rules: bool = False,
    workers: int | None = 1,
) -> BatchSummary:
    """Judge every pending eligible span (or the given ones); safe to interrupt and resume.

    `rank_by_rules` judges first the spans whose rules-judge verdict flags misuse, then use, then
    unclear use (a cheap pre-triage for an expensive LLM judge with `limit` or `max_cost`).
    `workers` > 1 splits the batch over that many processes, whole episodes each: for the LLM
    judge one event loop's CPU per call, not the network, bounds a single process at high
    concurrency; the rules judge is CPU-bound throughout (loading and judging). See
    `judge/workers.py`. `workers=None` chooses: one per core for a rules batch of at least
    AUTO_WORKER_SPANS spans, otherwise one."""
    summary = BatchSummary(batch_id=uuid.uuid4().hex[:12], judge=settings.judge)
    t0 = time.monotonic()
    if settings.judge == "llm":
        from .llm import make_client

        make_client(settings)  # fail fast on a missing key or model, before touching the store
    pool = None
    method = ""
    auto = workers is None
    if workers is None:
        workers = (os.cpu_count() or 1) if settings.judge == "rules" else 1
    if workers > 1:
        from .workers import WorkerPool, start_method

        method = start_method()
        if method == "spawn" and not auto:
            pool = WorkerPool(db, settings, workers, summary.batch_id, method)  # they import while we prepare
    try:
        todo = _prepare(db, settings, span_ids, limit, summary, rank_by_rules)
    except BaseException:
        if pool is not None:
            pool.cancel()
        raise
    if pool is not None and len(todo) <= 1:
        pool.cancel()
        pool = None
    if method and pool is None and len(todo) >= (AUTO_WORKER_SPANS if auto else 2):
        if settings.judge == "rules" and method == "fork":
            from . import rules  # noqa: F401  (imported once here, inherited by every worker)
        pool = WorkerPool(db, settings, workers, summary.batch_id, method)
    writer = _Writer(db, flush_seconds(settings.judge))
    status = "done"
    try:
        if pool is not None:
            status = pool.run(todo, summary, concurrency, max_cost, progress)
        elif settings.judge == "rules":
            status = _run_rules(db, settings, todo, writer, summary, progress)
        else:
            status = asyncio.run(
                _run_llm(db, settings, todo, writer, summary, concurrency, max_cost, progress)
            )
    except KeyboardInterrupt:
        status = "interrupted"
        summary.stopped = "interrupted; run the same command again to resume"
    finally:
        summary.seconds = time.monotonic() - t0
        writer.close(end=(summary.batch_id, status))
    return summary


def _run_rules(
    db: Any,
    settings: JudgeSettings,
    todo: list[tuple[str, str]],
    writer: _Writer,
    summary: BatchSummary,
    progress: Progress | None,
    external_stop: Any = None,
    on_result: Callable[[JudgmentResult], None] | None = None,
) -> str:
    """Judge `todo` with the rules judge in this process; returns done / stopped.

    Episodes are loaded a chunk at a time (one query per table per chunk); all spans of an
    episode share one rendering of its steps (`store.evidence`)."""
    for chunk in _chunks(todo):
        if external_stop is not None and external_stop.is_set():
            return "stopped"
        # The chunk's records are a large, long-lived, acyclic heap: the collector stays off while
        # it is built and it is frozen before collection resumes, so neither the first collection
        # after loading nor the ones the judge's temporaries trigger walk it (~5% of the batch).
        was = gc.isenabled()
        gc.disable()
        try:
            loaded = _load_chunk(db, chunk)
            gc.freeze()
        finally:
            if was:
                gc.enable()
        try:
            _judge_rules_chunk(loaded, settings, writer, summary, progress, on_result)
        finally:
            gc.unfreeze()
    return "done"


def _judge_rules_chunk(
    loaded: list[tuple[EpisodeEvidence, SpanContext]],
    settings: JudgeSettings,
    writer: _Writer,
    summary: BatchSummary,
    progress: Progress | None,
    on_result: Callable[[JudgmentResult], None] | None,
) -> None:
    from .rules import judge_rules

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


def _llm_chunk(db: Any, chunk: list[tuple[str, str]], settings: JudgeSettings) -> list[tuple[str, Any]]:
    """Load a chunk and build its evidence packages (run in a thread, off the event loop).

    Returns (span_id, package or the exception that prevented it), largest package first: big
    spans need the most reads and the slowest replies, so starting them early keeps the last
    seconds of a batch from running at low concurrency (longest-processing-time-first order)."""
    loaded = _load_chunk(db, chunk)
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


async def _run_llm(
    db: Any,
    settings: JudgeSettings,
    todo: list[tuple[str, str]],
    writer: _Writer,
    summary: BatchSummary,
    concurrency: int,
    max_cost: float | None,
    progress: Progress | None,
    external_stop: Any = None,
    on_result: Callable[[JudgmentResult], None] | None = None,
) -> str:
    """Judge `todo` with the LLM loop at `concurrency` spans in flight; returns done / stopped /
    interrupted.

    A pipeline without barriers: the next chunk is loaded (and its packages built) in a thread
    while the current one is judged, and a span starts as soon as any slot frees, so chunk
    boundaries never drain the concurrency."""
    from .llm import judge_llm, make_client

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

    async def one(span_id: str, pkg: Any) -> None:
        res = JudgmentResult(span_id=span_id, batch_id=summary.batch_id)
        inflight[res.judgment_id] = res
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
        if progress:
            progress(summary)

    chunks = list(_chunks(todo, first=8))
    nxt: asyncio.Future[list[tuple[str, Any]]] | None = None
    # The loader and writer threads hold the GIL for CPU work; when a reply arrives, the event
    # loop waits for them to yield it (every 5 ms by default). A shorter interval keeps that wait,
    # which adds to every call's latency, small.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        if chunks:
            nxt = asyncio.ensure_future(asyncio.to_thread(_llm_chunk, db, chunks[0], settings))
        for i in range(len(chunks)):
            assert nxt is not None
            work = await nxt
            # The chunk's packages live until its spans are judged: frozen, they are not walked by
            # the collections the loop's temporaries trigger (a full one over every loaded chunk
            # stalled all calls in flight for ~150 ms). Unfrozen when the batch ends.
            gc.freeze()
            nxt = (
                asyncio.ensure_future(asyncio.to_thread(_llm_chunk, db, chunks[i + 1], settings))
                if i + 1 < len(chunks) and not stopped()
                else None
            )
            for span_id, pkg in work:
                await sem.acquire()
                if stopped():
                    sem.release()
                    break
                task = asyncio.create_task(one(span_id, pkg))
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


def judge_span(db: Any, span_id: str, judge: str = "rules", **settings: Any) -> JudgmentResult:
    """Judge (or re-judge) one span now and store the result; earlier judgments stay as history.

    This is what the app's re-judge button calls. Settings are `JudgeSettings` fields (model,
    base_url, api_key_env, reference, max_calls, ...)."""
    from ..store import connect
    from ..store.context import load_span_context
    from ..store.evidence import load_evidence
    from ..store.judging import replay_journal
    from .rules import judge_rules

    s = JudgeSettings(judge=judge, **settings)  # type: ignore[arg-type]
    con = connect(db)
    try:
        replay_journal(con, db)
        span = load_span_context(con, span_id)
        ev = load_evidence(con, [span.episode_id])[span.episode_id]
    finally:
        con.close()
    if span.status != "eligible":
        raise ValueError(f"span {span_id} is {span.status}, not eligible for judging")
    pkg = build_package(ev, span, reference=s.reference)
    if s.judge == "rules":
        res = judge_rules(pkg, s)
    else:
        from .llm import judge_llm, make_client

        async def go() -> JudgmentResult:
            client = make_client(s)
            try:
                return await judge_llm(pkg, client, s, Prompts.load())
            finally:
                await client.close()

        res = asyncio.run(go())
    w = _Writer(db)
    w.add(res)
    w.close()
    return res
