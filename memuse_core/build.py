"""The context build pipeline (MemUse 3.3, A.1): stored episodes in, derived context tables out.

`build_store` loads stored episodes in batches, builds each one's evaluation context with the pure
`rules.context.build_episode_context`, and writes the derived tables through `store.context`.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from .crash import die_with_parent, point
from .rules.context import build_episode_context
from .rules.models import EpisodeContext
from .store import Connection, connect, db_path, load_episodes
from .store.build_state import mark_build_finished, mark_build_started
from .store.context import clear_context, episodes_to_build, write_contexts

Progress = Callable[[int, int], None]


def build_store(
    db: str | os.PathLike[str] | Path | None = None,
    *,
    rebuild: bool = False,
    episode_ids: Iterable[str] | None = None,
    progress: Progress | None = None,
    batch: int = 100,
    workers: int | None = None,
) -> dict[str, int]:
    """Build and store the evaluation context of stored episodes.

    Without `rebuild`, only episodes not built yet (or the given `episode_ids`); with `rebuild`,
    every derived context table is recomputed from the events. Judgments, annotations,
    verdicts and planted truth are never touched. Episodes are loaded and built in batches, each
    batch written in one transaction. With `workers` > 1 (0 = automatic: 2 for large builds on a
    machine with 2+ cores), batches are loaded and built by spawned child processes that share
    the file read-only while the parent writes between rounds (DuckDB allows one writer per
    file); the caller's main module must be importable (a script or the CLI, not stdin).
    `progress(done, total)` is called per batch. Returns counts (episodes, spans, errors).

    Resumable: every batch is its own transaction and the build marker
    (`store.build_state`) stays set from before the first batch until after the last, so a build
    that is killed is finished by the next `build_store`, which builds exactly the episodes the
    killed one did not reach (the context of an episode depends only on the stored events).
    """
    path = str(db_path(db))
    con = connect(path)
    try:
        mark_build_started(con, rebuild=rebuild)
        if rebuild and episode_ids is None:
            clear_context(con)
        todo = episodes_to_build(con, list(episode_ids) if episode_ids is not None else None, rebuild=rebuild)
    finally:
        con.close()
    point("build.start")
    total = len(todo)
    if workers is None or workers < 0:
        workers = 1
    elif workers == 0:  # automatic: two processes for large builds on a multi-core machine
        workers = 2 if total >= 6 * batch and (os.cpu_count() or 1) >= 2 else 1
    stats = {"episodes": 0, "spans": 0, "errors": 0}
    if progress:
        progress(0, total)
    batches = [todo[i : i + batch] for i in range(0, total, batch)]
    if workers <= 1:
        con = connect(path)
        try:
            for ids in batches:
                recs = load_episodes(con, ids)
                _write(con, [build_episode_context(recs[e]) for e in ids if e in recs], stats)
                point("build.batch")
                if progress:
                    progress(stats["episodes"], total)
            mark_build_finished(con)
        finally:
            con.close()
        return stats
    mp = multiprocessing.get_context("spawn")
    # ProcessPoolExecutor, not multiprocessing.Pool: a worker that dies (OOM killer, kill -9)
    # breaks the pool with an error instead of leaving the build waiting forever.
    with ProcessPoolExecutor(workers, mp_context=mp, initializer=die_with_parent) as pool:
        step = workers * 2
        for k in range(0, len(batches), step):
            try:
                results = list(pool.map(_load_and_build, [(path, ids) for ids in batches[k : k + step]]))
            except BrokenProcessPool:
                raise RuntimeError(
                    f"a build worker process died after {stats['episodes']} of {total} episodes "
                    "(those are saved): run the same build again to finish"
                ) from None
            con = connect(path)
            try:
                for ctxs in results:
                    _write(con, ctxs, stats)
                    point("build.batch")
            finally:
                con.close()
            if progress:
                progress(stats["episodes"], total)
    con = connect(path)
    try:
        mark_build_finished(con)
    finally:
        con.close()
    return stats


def _load_and_build(args: tuple[str, list[str]]) -> list[EpisodeContext]:
    """Worker: load a batch of episodes read-only and build their contexts."""
    path, ids = args
    con = connect(path, read_only=True)
    try:
        recs = load_episodes(con, ids)
    finally:
        con.close()
    return [build_episode_context(recs[e]) for e in ids if e in recs]


def _write(con: Connection, ctxs: list[EpisodeContext], stats: dict[str, int]) -> None:
    # one transaction per batch; tables were checked by episodes_to_build
    write_contexts(con, ctxs, replace=True, ensure=False, transaction=True)
    stats["episodes"] += len(ctxs)
    stats["spans"] += sum(len(c.spans) for c in ctxs)
    stats["errors"] += sum(1 for c in ctxs if not c.valid)
