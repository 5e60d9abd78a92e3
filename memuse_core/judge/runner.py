"""Batch judging and single-span re-judging (DESIGN.md "Judging", "Concurrency"; MemUse A.3.2).

The runner opens the store per unit of work (load a chunk of spans, write a few results) and closes
it again, so the app can use the database between writes. Every result goes to the journal first
(flushed; fsynced before each commit), then into the tables in one short transaction. A resumed
batch replays the journal and skips spans that already have a final judgment from the same judge
kind, so nothing is lost and nothing is judged twice. Ctrl-C / SIGTERM records in-flight spans as
`interrupted` (they are judged again on resume). The loops are `judge.loops`, the shared batch
parts `judge.batch`, the worker processes `judge.workers`.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

from ..rules.judgment import JudgmentResult
from ..store import StoreError, connect
from ..store.journal import replay_journal
from ..store.judging import (
    done_spans,
    eligible_span_ids,
    rules_ranks,
    start_batch,
)
from ..store.spans import load_span_context
from ..store.verdict_rows import write_auto_neutral_verdicts
from .batch import BatchSummary, ResultWriter, flush_seconds
from .evidence import load_evidence
from .loops import Progress, run_llm, run_rules
from .package import build_package
from .result import JudgeSettings, Prompts
from .rules import judge_rules
from .workers import WorkerPool, start_method


def _prepare(
    db: Any,
    settings: JudgeSettings,
    span_ids: list[str] | None,
    limit: int | None,
    summary: BatchSummary,
    rank_by_rules: bool = False,
    retry_errors: bool = False,
) -> list[tuple[str, str]]:
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
                raise StoreError(
                    f"not an eligible span: {sorted(missing)[0]} (see `memuse info`; only eligible "
                    "spans are judged)"
                )
        else:
            done = done_spans(con, settings.judge, retry_errors=retry_errors)
            todo = [p for p in elig if p[0] not in done]
            summary.skipped_done = len(elig) - len(todo)
        if rank_by_rules:
            ranks = rules_ranks(con)
            todo.sort(key=lambda p: ranks.get(p[0], 4))  # stable: episode order within a rank
        if limit is not None:
            todo = todo[:limit]
        start_batch(con, summary.batch_id, settings.judge, settings.model, settings.public())
    finally:
        con.close()
    summary.planned = len(todo)
    return todo


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
    retry_errors: bool = False,
) -> BatchSummary:
    """Judge every pending eligible span (or the given ones); safe to interrupt and resume.

    `rank_by_rules` judges first the spans whose rules-judge verdict flags misuse, then use, then
    unclear use (a cheap pre-triage for an expensive LLM judge with `limit` or `max_cost`).
    `workers` > 1 splits the batch over that many processes, whole episodes each: for the LLM
    judge one event loop's CPU per call, not the network, bounds a single process at high
    concurrency; the rules judge is CPU-bound throughout (loading and judging). See
    `judge/workers.py`. `workers=None` chooses: one per core for a rules batch of at least
    AUTO_WORKER_SPANS spans, otherwise one.

    An LLM batch starts with a preflight call (`judge.endpoint.preflight`): an endpoint it cannot
    use raises `EndpointError` before anything is written. Spans whose judgment failed for a
    transport failure are judged again by the next batch; `retry_errors` also judges again the
    spans whose judgment failed validation or the budget."""
    summary = BatchSummary(batch_id=uuid.uuid4().hex[:12], judge=settings.judge, priced=settings.priced)
    t0 = time.monotonic()
    if settings.judge == "llm":
        from .endpoint import preflight

        # fail fast on a missing key or model, an unreachable endpoint, a rejected key or an
        # unknown model, before touching the store
        summary.preflight_seconds = preflight(settings)
    pool = None
    method = ""
    auto = workers is None
    if workers is None:
        workers = (os.cpu_count() or 1) if settings.judge == "rules" else 1
    if workers > 1:
        method = start_method()
        if method == "spawn" and not auto:
            pool = WorkerPool(db, settings, workers, summary.batch_id, method)  # they import while we prepare
    try:
        todo = _prepare(db, settings, span_ids, limit, summary, rank_by_rules, retry_errors)
    except BaseException:
        if pool is not None:
            pool.cancel()
        raise
    if pool is not None and len(todo) <= 1:
        pool.cancel()
        pool = None
    if method and pool is None and len(todo) >= (AUTO_WORKER_SPANS if auto else 2):
        pool = WorkerPool(db, settings, workers, summary.batch_id, method)
    writer = ResultWriter(db, flush_seconds(settings.judge))
    status = "done"
    try:
        if pool is not None:
            status = pool.run(todo, summary, concurrency, max_cost, progress)
        elif settings.judge == "rules":
            status = run_rules(db, settings, todo, writer, summary, progress)
        else:
            import asyncio  # the LLM loop only: a rules batch never loads it

            status = asyncio.run(
                run_llm(db, settings, todo, writer, summary, concurrency, max_cost, progress)
            )
    except KeyboardInterrupt:
        status = "interrupted"
        summary.stopped = "interrupted; run the same command again to resume"
    finally:
        summary.seconds = time.monotonic() - t0
        writer.close(end=(summary.batch_id, status))
    return summary


def judge_span(
    db: Any, span_id: str, judge: str = "rules", *, fields: str = "", **settings: Any
) -> JudgmentResult:
    """Judge (or re-judge) one span now and store the result; earlier judgments stay as history.

    This is what the app's re-judge button calls. Settings are `JudgeSettings` fields (model,
    base_url, api_key_env, reference, max_calls, ...). The LLM judge first makes its preflight
    call: an endpoint it cannot use raises `EndpointError` (its message ends with `fields`, e.g.
    the app's sidebar fields to check) and nothing is written."""
    s = JudgeSettings(judge=judge, **settings)  # type: ignore[arg-type]
    if s.judge == "llm":
        from .endpoint import preflight

        preflight(s, fields=fields)
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
        import asyncio

        from .llm import judge_llm, make_client  # lazy: the openai SDK loads only for the LLM judge

        async def go() -> JudgmentResult:
            client = make_client(s)
            try:
                return await judge_llm(pkg, client, s, Prompts.load())
            finally:
                await client.close()

        res = asyncio.run(go())
    w = ResultWriter(db)
    w.add(res)
    w.close()
    return res
