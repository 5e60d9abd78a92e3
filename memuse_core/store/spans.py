"""Reading the stored evaluation context (MemUse 3.3, A.1) back as the values of `rules.models`.

The judge and the app read spans only through `load_spans`, `load_span_context`,
`load_episode_context` and `list_spans`.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

import duckdb

from ..events import Placement, Proof
from ..rules.models import (
    DeliveryContext,
    EarlierCopy,
    EntryExposure,
    EpisodeContext,
    PriorSource,
    RecordingCheck,
    SpanContext,
    SpanEntry,
)
from .blobs import iter_blob_texts
from .decode import construct

if TYPE_CHECKING:  # pandas loads only for `list_spans` (the judge never needs it)
    import pandas as pd


def _placements(con: duckdb.DuckDBPyConnection, delivery_ids: list[str]) -> dict[str, list[Placement]]:
    rows = con.execute(
        "SELECT delivery_id, pos, slot, kind, text_hash, digest, size, message_index, json_pointer, "
        "message_digest, start FROM placements WHERE delivery_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY delivery_id, pos",
        [delivery_ids],
    ).fetchall()
    texts = iter_blob_texts(con, [r[4] for r in rows if r[4] is not None])
    out: dict[str, list[Placement]] = {}
    for did, _pos, slot, kind, th, dg, size, mi, jp, md, start in rows:
        proof = None
        if any(x is not None for x in (mi, jp, md, start)):
            proof = Proof(message_index=mi, json_pointer=jp, message_digest=md, start=start)
        text = texts.get(th) if th is not None else None
        out.setdefault(did, []).append(
            Placement(
                slot=slot,
                kind=kind,
                text=text,
                digest=dg,
                size=None if text is not None else size,
                proof=proof,
            )
        )
    return out


def _load_spans(con: duckdb.DuckDBPyConnection, where: str, arg: Any) -> list[SpanContext]:
    spans = con.execute(
        "SELECT span_id, episode_id, status, reason, first_step, last_step, restatements, chars, form, "
        f"route, first_delivery_id, removed_steps FROM spans WHERE {where} ORDER BY episode_id, seq",
        [arg],
    ).fetchall()
    if not spans:
        return []
    sids = [r[0] for r in spans]
    sarg = [sids]
    sd = con.execute(
        "SELECT span_id, delivery_id FROM span_deliveries WHERE span_id IN "
        "(SELECT unnest(?::VARCHAR[])) ORDER BY span_id, pos",
        sarg,
    ).fetchall()
    se = con.execute(
        "SELECT span_id, pos, namespace, item_id, version, digest, display_key, value_hash, exposure, "
        "stage, exposed_hash, window_start, window_end, resident FROM span_entries WHERE span_id IN "
        "(SELECT unnest(?::VARCHAR[])) ORDER BY span_id, pos",
        sarg,
    ).fetchall()
    ps = con.execute(
        "SELECT span_id, pos, kind, message_index, role, text_hash, cut FROM prior_sources WHERE span_id IN "
        "(SELECT unnest(?::VARCHAR[])) ORDER BY span_id, pos",
        sarg,
    ).fetchall()
    ec = con.execute(
        "SELECT span_id, entry_pos, delivery_id, step, visibility, contains_target FROM span_earlier_copies "
        "WHERE span_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY span_id, entry_pos",
        sarg,
    ).fetchall()
    eps = sorted({r[1] for r in spans})
    tasks = dict(
        con.execute(
            "SELECT episode_id, task_hash FROM episodes WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
            [eps],
        ).fetchall()
    )
    hashes = [r[7] for r in se] + [r[10] for r in se] + [r[5] for r in ps] + list(tasks.values())
    texts = iter_blob_texts(con, [h for h in hashes if h is not None])
    pl = _placements(con, [r[10] for r in spans if r[10] is not None])
    # Stored rows were validated when the context was built: construct, do not validate again
    # (loading is a third of the rules judge's batch time; tests compare both paths).
    dels: dict[str, list[str]] = {}
    for sid, did in sd:
        dels.setdefault(sid, []).append(did)
    tget = texts.get
    ents: dict[str, list[SpanEntry]] = {}
    for sid, pos, ns, iid, ver, dg, dk, vh, expo, stage, xh, ws, we, res in se:
        ents.setdefault(sid, []).append(
            construct(
                SpanEntry,
                {
                    "pos": pos,
                    "namespace": ns,
                    "item_id": iid,
                    "version": ver,
                    "digest": dg,
                    "display_key": dk,
                    "value": tget(vh) if vh is not None else None,
                    "exposure": expo,
                    "exposed_text": tget(xh) if xh is not None else None,
                    "window": (ws, we) if ws is not None else None,
                    "resident": bool(res),
                    "stage": stage,
                },
            )
        )
    prior: dict[str, list[PriorSource]] = {}
    loads = json.loads
    for sid, pos, kind, mi, role, th, cut in ps:
        prior.setdefault(sid, []).append(
            construct(
                PriorSource,
                {
                    "pos": pos,
                    "message_index": mi,
                    "role": role,
                    "text": tget(th, "") if th is not None else "",
                    "cut": [tuple(x) for x in loads(cut)] if cut else [],
                    "memory_only": kind == "memory_only",
                },
            )
        )
    copies: dict[str, list[EarlierCopy]] = {}
    for sid, pos, did, step, vis, cont in ec:
        copies.setdefault(sid, []).append(
            construct(
                EarlierCopy,
                {
                    "entry_pos": pos,
                    "delivery_id": did,
                    "step": step,
                    "visibility": vis,
                    "contains_target": cont,
                },
            )
        )
    out = []
    for sid, eid, status, reason, fs, ls, rest, chars, form, route, fdid, removed in spans:
        th = tasks.get(eid)
        out.append(
            construct(
                SpanContext,
                {
                    "span_id": sid,
                    "episode_id": eid,
                    "status": status,
                    "reason": reason,
                    "first_step": fs,
                    "last_step": ls,
                    "delivery_ids": dels.get(sid, []),
                    "restatements": rest,
                    "chars": chars,
                    "form": form,
                    "route": route,
                    "placements": pl.get(fdid, []),
                    "entries": ents.get(sid, []),
                    "prior_sources": prior.get(sid, []),
                    "earlier_copies": copies.get(sid, []),
                    "removed_steps": list(removed or []),
                    "task": tget(th) if th is not None else None,
                },
            )
        )
    return out


def load_spans(con: duckdb.DuckDBPyConnection, span_ids: list[str]) -> list[SpanContext]:
    """Stored spans with everything the judge needs, in episode then processing order."""
    return _load_spans(con, "span_id IN (SELECT unnest(?::VARCHAR[]))", list(span_ids))


def load_span_context(con: duckdb.DuckDBPyConnection, span_id: str) -> SpanContext:
    """One stored span with everything the judge needs (raises KeyError when it is not built)."""
    try:
        spans = _load_spans(con, "span_id = ?", span_id)
    except duckdb.CatalogException:
        spans = []
    if not spans:
        raise KeyError(f"span {span_id!r} is not in the store (run `memuse build`)")
    return spans[0]


def load_episode_context(con: duckdb.DuckDBPyConnection, episode_id: str) -> EpisodeContext:
    """The stored evaluation context of one episode (raises KeyError when it is not built)."""
    try:
        built = con.execute("SELECT 1 FROM context_built WHERE episode_id = ?", [episode_id]).fetchone()
    except duckdb.CatalogException:
        built = None
    if built is None:
        if con.execute("SELECT 1 FROM episodes WHERE episode_id = ?", [episode_id]).fetchone() is None:
            known = [r[0] for r in con.execute("SELECT episode_id FROM episodes").fetchall()]
            near = difflib.get_close_matches(episode_id, known, n=3, cutoff=0.6)
            hint = f": did you mean {', '.join(repr(x) for x in near)}?" if near else ""
            raise KeyError(f"episode {episode_id!r} is not in the store{hint}")
        raise KeyError(f"episode {episode_id!r} has no built context (run `memuse build`)")
    checks = [
        RecordingCheck(episode_id=episode_id, ok=ok, rule=rule, detail=detail or "")
        for ok, rule, detail in con.execute(
            "SELECT ok, rule, detail FROM recording_checks WHERE episode_id = ? ORDER BY rule, detail",
            [episode_id],
        ).fetchall()
    ]
    ex = con.execute(
        "SELECT delivery_id, pos, exposure, placement_pos, stage, exposed_hash FROM entry_exposure "
        "WHERE episode_id = ? ORDER BY delivery_id, pos",
        [episode_id],
    ).fetchall()
    texts = iter_blob_texts(con, [r[5] for r in ex if r[5] is not None])
    exps: dict[str, list[EntryExposure]] = {}
    for did, pos, expo, pp, stage, xh in ex:
        exps.setdefault(did, []).append(
            EntryExposure(
                pos=pos,
                exposure=expo,
                placement_pos=pp,
                stage=stage,
                exposed_text=texts.get(xh) if xh is not None else None,
            )
        )
    dels = [
        DeliveryContext(
            delivery_id=r[0],
            episode_id=episode_id,
            consuming_step=r[1],
            attributed=r[2],
            verified=r[3],
            span_id=r[4],
            restatement=r[5],
            chars=r[6],
            problem=r[7],
            entries=exps.get(r[0], []),
        )
        for r in con.execute(
            "SELECT delivery_id, consuming_step, attributed, verified, span_id, restatement, chars, problem "
            "FROM delivery_context WHERE episode_id = ? ORDER BY seq",
            [episode_id],
        ).fetchall()
    ]
    return EpisodeContext(
        episode_id=episode_id,
        checks=checks,
        deliveries=dels,
        spans=_load_spans(con, "episode_id = ?", episode_id),
    )


def list_spans(
    con: duckdb.DuckDBPyConnection, status: str | None = None, episode_id: str | None = None
) -> pd.DataFrame:
    """Stored spans as a DataFrame (one row per span, in episode then processing order)."""
    ensure_exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'spans'"
    ).fetchone()
    cols = [
        "span_id",
        "episode_id",
        "status",
        "first_step",
        "last_step",
        "n_deliveries",
        "restatements",
        "n_entries",
        "chars",
        "est_tokens",
        "form",
        "route",
        "reason",
    ]
    if not ensure_exists or not ensure_exists[0]:
        import pandas as pd

        return pd.DataFrame(columns=cols)
    conds, args = [], []
    if status is not None:
        conds.append("status = ?")
        args.append(status)
    if episode_id is not None:
        conds.append("episode_id = ?")
        args.append(episode_id)
    where = (" WHERE " + " AND ".join(conds)) if conds else ""
    return con.execute(f"SELECT {', '.join(cols)} FROM spans{where} ORDER BY episode_id, seq", args).df()
