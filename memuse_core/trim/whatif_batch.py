"""`memuse trim`: the MemTrim what-if of every recorded delivery, stored in `trim_results`
(MemTrim 3.3 on MemUse deliveries; see `whatif`). Batches of episodes are read from the store as
plain rows, trimmed (in worker processes when there are several batches) and written back in one
transaction per batch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from ..vocab import estimate_tokens
from .whatif import DeliveryWhatIf, EntryWhatIf, episode_whatif, inputs_from_rows

Payload = list[tuple[str, Any, dict[str, list[str]]]]
"""(episode id, store.trim.EpisodeDeliveryRows, span prior texts) per episode of a batch."""

_WORKER_CACHE: dict[str, Any] = {}


def batch_table(payload: Payload) -> tuple[Any, dict[str, Any]]:
    """`batch_rows` as one Arrow table (built in the worker, so the writer only inserts)."""
    from ..store.trim import rows_table

    rows, tot = batch_rows(payload)
    return rows_table(rows), tot


def batch_rows(payload: Payload) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    """trim_results rows and totals for a batch of episodes (runs in a worker process too)."""
    tot = _new_totals()
    rows: list[tuple[Any, ...]] = []
    if len(_WORKER_CACHE) > 50_000:
        _WORKER_CACHE.clear()
    for eid, loaded, prior in payload:
        task, inputs = inputs_from_rows(eid, loaded)
        for w in episode_whatif(inputs, task, prior, message_cache=_WORKER_CACHE):
            tot["deliveries"] += 1
            tot["prior_from"][w.prior_from] = tot["prior_from"].get(w.prior_from, 0) + 1
            for e in w.entries:
                rows.append(row_of(w, e))
                d = e.decision
                tot["entries"] += 1
                tot["shared"] += len(d.shared)
                tot["conflicting"] += len(d.conflicting)
                tot["memory_only"] += len(d.memory_only)
                tot["duplicates"] += len(d.duplicates)
                tot["withheld"] += len(d.withheld)
                tot["chars_before"] += e.chars_before
                tot["chars_after"] += e.chars_after
                tot["outcomes"][d.outcome] = tot["outcomes"].get(d.outcome, 0) + 1
        tot["episodes"] += 1
    return rows, tot


def _new_totals() -> dict[str, Any]:
    return {
        "episodes": 0,
        "deliveries": 0,
        "entries": 0,
        "shared": 0,
        "conflicting": 0,
        "memory_only": 0,
        "duplicates": 0,
        "withheld": 0,
        "chars_before": 0,
        "chars_after": 0,
        "outcomes": {},
        "prior_from": {},
    }


def _add(tot: dict[str, Any], part: dict[str, Any]) -> None:
    for k, v in part.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                tot[k][kk] = tot[k].get(kk, 0) + vv
        else:
            tot[k] += v


def run_store(
    con: Any,
    *,
    limit: int | None = None,
    batch: int = 20,
    workers: int | None = None,
    progress: Callable[[int], Any] | None = None,
) -> dict[str, Any]:
    """Compute and store the what-if of every recorded delivery (`memuse trim`); returns totals.

    Old results of the episodes are removed first; this process then reads each batch of
    episodes from the store and inserts its rows in one transaction; with `workers` > 1 (default: the machine's cores, at most 4) the trimming runs
    in worker processes that never open the store."""
    from ..store.trim import (
        delete_trim_rows,
        delivery_rows,
        ensure_trim_tables,
        episode_ids,
        replace_trim_rows,
        span_prior_texts,
    )

    ensure_trim_tables(con)
    eids = episode_ids(con, limit)
    # old results go first, in one statement (per-batch deletes would rescan a growing table)
    delete_trim_rows(con, eids if limit else None)
    chunks = [eids[i : i + batch] for i in range(0, len(eids), batch)]
    n_workers = workers if workers is not None else min(4, os.cpu_count() or 1)
    n_workers = max(1, min(n_workers, len(chunks)))
    tot = _new_totals()

    def payload(chunk: list[str]) -> Payload:
        loaded = delivery_rows(con, chunk)
        priors = span_prior_texts(con, chunk)
        return [(eid, loaded[eid], priors.get(eid, {})) for eid in chunk if eid in loaded]

    def finish(chunk: list[str], rows: Any, part: dict[str, Any]) -> None:
        replace_trim_rows(con, None, rows)
        _add(tot, part)
        if progress:
            progress(len(chunk))

    if n_workers == 1:
        for chunk in chunks:
            finish(chunk, *batch_rows(payload(chunk)))
    else:
        with ProcessPoolExecutor(n_workers, mp_context=get_context("spawn")) as pool:
            pending: list[tuple[list[str], Future[Any]]] = []
            for chunk in chunks:
                pending.append((chunk, pool.submit(batch_table, payload(chunk))))
                while len(pending) > 2 * n_workers:
                    done_chunk, fut = pending.pop(0)
                    finish(done_chunk, *fut.result())
            for done_chunk, fut in pending:
                finish(done_chunk, *fut.result())
    saved = tot["chars_before"] - tot["chars_after"]
    tot["chars_saved"] = saved
    tot["tokens_saved"] = estimate_tokens(saved)
    tot["saved_share"] = saved / tot["chars_before"] if tot["chars_before"] else 0.0
    return tot


def row_of(w: DeliveryWhatIf, e: EntryWhatIf) -> tuple[Any, ...]:
    """One trim_results row (column order of store.trim.TRIM_COLUMNS)."""
    d = e.decision
    return (
        w.delivery_id,
        e.pos,
        w.episode_id,
        len(d.shared),
        len(d.conflicting),
        len(d.memory_only),
        d.outcome,
        e.chars_before,
        e.chars_after,
        None if e.same_as else json.dumps(d.to_dict()),
        e.namespace,
        e.item_id,
        w.prior_from,
        e.jaccard,
        e.klass,
        estimate_tokens(e.chars_before - e.chars_after),
        e.same_as,
    )
