"""Build the evaluation context of episodes (MemUse 3.3, A.1) and store it.

`build_episode_context` is pure: EpisodeRecord in, EpisodeContext out. `build_store` loads
stored episodes in batches, builds them, and writes the derived tables (memuse_core.store.context).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ..episode import EpisodeRecord
from ..spans import credit_windows, group_spans, span_status
from .analysis import analyze_episode
from .model import DeliveryContext, EntryExposure, EpisodeContext, SpanContext, SpanEntry
from .prior import earlier_copies, prior_sources, removed_steps


def build_episode_context(rec: EpisodeRecord) -> EpisodeContext:
    """The evaluation context of one episode (3.3): recording checks (A.1.3), per-delivery
    attribution and exposure (A.1.1, A.1.2), injection spans (A.1.4) with credit windows (A.1.5),
    eligibility (3.3), volume C_S (A.4.4), prior context B_S and earlier copies (A.1.3, A.2.1)."""
    an = analyze_episode(rec)
    spans = group_spans(an)
    credit_windows(an, spans)
    failed = an.failed_rules()
    dctx: dict[str, DeliveryContext] = {}
    exp_models: dict[tuple[int, int], EntryExposure] = {}

    def exposure_model(k: int, x) -> EntryExposure:  # noqa: ANN001 - shared by restatements
        m = exp_models.get((k, id(x)))
        if m is None:
            m = exp_models[(k, id(x))] = EntryExposure(
                pos=k,
                exposure=x.exposure,
                exposed_text=x.exposed_text,
                placement_pos=x.placement_pos,
                stage=x.stage,
            )
        return m

    for di in an.infos:
        problem = di.att.problem
        if problem is None and not di.verified and di.placements:
            bad = next(rp for rp in di.placements if not rp.verified)
            problem = f"{bad.rule}: {bad.detail}" if bad.detail else bad.rule
        elif problem is None and not di.placements and di.d.entries:
            problem = "placement_missing"
        if problem is None and di.redacted_without_size:
            problem = "warning: redacted placement without a recorded size counts 0 characters (A.4.4)"
        dctx[di.id] = DeliveryContext(
            delivery_id=di.id,
            episode_id=rec.episode_id,
            consuming_step=di.step,
            attributed=di.att.attributed,
            verified=di.verified,
            chars=di.chars,
            problem=problem,
            entries=[exposure_model(k, x) for k, x in enumerate(di.exposures)],
        )
    out_spans: list[SpanContext] = []
    for s in spans:
        status, reason = span_status(s, an.valid, failed)
        first = s.first
        ids = [d.id for d in s.deliveries]
        for k, d in enumerate(s.deliveries):
            dc = dctx[d.id]
            dc.span_id, dc.restatement = s.span_id, k > 0
        entries = []
        for pos, e in enumerate(first.d.entries):
            x = first.exposures[pos]
            entries.append(
                SpanEntry(
                    pos=pos,
                    namespace=e.namespace,
                    item_id=first.ikeys[pos][1],
                    version=e.version,
                    digest=e.digest,
                    display_key=e.display_key if _shown(e.display_key, first) else None,
                    value=e.value,
                    exposure=x.exposure,  # type: ignore[arg-type]
                    exposed_text=x.exposed_text,
                    window=s.windows[pos] if s.windows else None,
                    resident=bool(s.resident[pos]) if s.resident else False,
                    stage=x.stage,
                )
            )
        attributed = s.attributed and s.nonempty
        out_spans.append(
            SpanContext(
                span_id=s.span_id,
                episode_id=rec.episode_id,
                status=status,  # type: ignore[arg-type]
                reason=reason,
                first_step=s.first_step,
                last_step=s.last_step,
                delivery_ids=ids,
                restatements=len(ids) - 1,
                chars=s.chars,
                form=first.d.form,
                route=first.d.route,
                placements=list(first.d.placements),
                entries=entries,
                prior_sources=prior_sources(an, first) if attributed else [],
                earlier_copies=earlier_copies(an, first, set(ids)) if s.nonempty else [],
                removed_steps=removed_steps(an, first) if attributed else [],
                task=rec.start.task,
            )
        )
    return EpisodeContext(
        episode_id=rec.episode_id,
        checks=an.checks,
        deliveries=[dctx[di.id] for di in an.infos],
        spans=out_spans,
    )


def _shown(key: str | None, di) -> bool:  # noqa: ANN001 - analysis.DInfo
    """A display key is listed only when a placement exposed it as a standalone identifier
    (A.2.1 "Exposed content")."""
    if not key:
        return False
    pat = re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])")
    return any(rp.text and pat.search(rp.text) for rp in di.placements)


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
    """
    from ..store import connect, db_path
    from ..store.context import clear_context, episodes_to_build

    path = str(db_path(db))
    con = connect(path)
    try:
        if rebuild and episode_ids is None:
            clear_context(con)
        todo = episodes_to_build(con, list(episode_ids) if episode_ids is not None else None, rebuild=rebuild)
    finally:
        con.close()
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
            from ..store import load_episodes

            for ids in batches:
                recs = load_episodes(con, ids)
                _write(con, [build_episode_context(recs[e]) for e in ids if e in recs], stats)
                if progress:
                    progress(stats["episodes"], total)
        finally:
            con.close()
        return stats
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    mp = multiprocessing.get_context("spawn")
    # ProcessPoolExecutor, not multiprocessing.Pool: a worker that dies (OOM killer, kill -9)
    # breaks the pool with an error instead of leaving the build waiting forever.
    with ProcessPoolExecutor(workers, mp_context=mp) as pool:
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
            finally:
                con.close()
            if progress:
                progress(stats["episodes"], total)
    return stats


def _load_and_build(args: tuple[str, list[str]]) -> list[EpisodeContext]:
    """Worker: load a batch of episodes read-only and build their contexts."""
    from ..store import connect, load_episodes

    path, ids = args
    con = connect(path, read_only=True)
    try:
        recs = load_episodes(con, ids)
    finally:
        con.close()
    return [build_episode_context(recs[e]) for e in ids if e in recs]


def _write(con, ctxs: list[EpisodeContext], stats: dict[str, int]) -> None:  # noqa: ANN001
    from ..store.context import write_contexts

    con.execute("BEGIN")
    try:
        write_contexts(con, ctxs, replace=True, ensure=False)  # tables checked by episodes_to_build
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    stats["episodes"] += len(ctxs)
    stats["spans"] += sum(len(c.spans) for c in ctxs)
    stats["errors"] += sum(1 for c in ctxs if not c.valid)
