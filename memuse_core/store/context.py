"""SQL of the evaluation-context area (MemUse 3.3, A.1): writing built contexts and reading them
back as the contract values of `memuse_core.context.model`.

The judge and the app read spans only through `load_span_context`, `load_episode_context` and
`list_spans`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from ..context.model import (
    DeliveryContext,
    EarlierCopy,
    EntryExposure,
    EpisodeContext,
    PriorSource,
    RecordingCheck,
    SpanContext,
    SpanEntry,
)
from ..events import Placement, Proof
from .area_tables import CONTEXT_DDL
from .reader import _construct
from .writer import append_rows, blob_hash, iter_blob_texts

if TYPE_CHECKING:
    import pandas as pd

CONTEXT_TABLES = [
    "context_built",
    "recording_checks",
    "delivery_context",
    "entry_exposure",
    "spans",
    "span_deliveries",
    "span_entries",
    "prior_sources",
    "span_earlier_copies",
]

S, I32, I64, B = pa.string(), pa.int32(), pa.int64(), pa.bool_()
_COLS: dict[str, list[tuple[str, pa.DataType]]] = {
    "context_built": [
        ("episode_id", S),
        ("valid", B),
        ("n_deliveries", I32),
        ("n_spans", I32),
        ("built_at", pa.timestamp("us")),
    ],
    "recording_checks": [("episode_id", S), ("ok", B), ("rule", S), ("detail", S)],
    "delivery_context": [
        ("delivery_id", S),
        ("episode_id", S),
        ("seq", I32),
        ("consuming_step", I32),
        ("attributed", B),
        ("verified", B),
        ("span_id", S),
        ("restatement", B),
        ("chars", I64),
        ("problem", S),
    ],
    "entry_exposure": [
        ("delivery_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("exposure", S),
        ("placement_pos", I32),
        ("stage", S),
        ("exposed_hash", I64),
        ("exposed_chars", I32),
    ],
    "spans": [
        ("span_id", S),
        ("episode_id", S),
        ("seq", I32),
        ("status", S),
        ("first_step", I32),
        ("last_step", I32),
        ("first_delivery_id", S),
        ("n_deliveries", I32),
        ("restatements", I32),
        ("n_entries", I32),
        ("chars", I64),
        ("est_tokens", I64),
        ("form", S),
        ("route", S),
        ("reason", S),
        ("removed_steps", pa.list_(I32)),
    ],
    "span_deliveries": [("span_id", S), ("delivery_id", S), ("pos", I32), ("episode_id", S)],
    "span_entries": [
        ("span_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("namespace", S),
        ("item_id", S),
        ("version", S),
        ("digest", S),
        ("display_key", S),
        ("value_hash", I64),
        ("exposure", S),
        ("stage", S),
        ("exposed_hash", I64),
        ("exposed_chars", I32),
        ("window_start", I32),
        ("window_end", I32),
        ("resident", B),
    ],
    "prior_sources": [
        ("span_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("kind", S),
        ("message_index", I32),
        ("role", S),
        ("text_hash", I64),
        ("chars", I32),
        ("cut", S),
    ],
    "span_earlier_copies": [
        ("span_id", S),
        ("entry_pos", I32),
        ("episode_id", S),
        ("delivery_id", S),
        ("step", I32),
        ("visibility", S),
        ("contains_target", B),
    ],
}


def ensure_context_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the context tables; a derived table whose columns differ from this version's DDL
    is dropped and recreated (it is rebuilt from events anyway)."""
    for sql in CONTEXT_DDL:
        con.execute(sql)
    for table, cols in _COLS.items():
        have = [
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]
        if have != [c for c, _ in cols]:
            con.execute(f"DROP TABLE IF EXISTS {table}")
            for sql in CONTEXT_DDL:
                if f"EXISTS {table} (" in sql:
                    con.execute(sql)


def clear_context(con: duckdb.DuckDBPyConnection) -> None:
    """Empty every context table (for `memuse build --rebuild`); other tables are untouched."""
    ensure_context_tables(con)
    con.execute("BEGIN")
    for t in CONTEXT_TABLES:
        con.execute(f"DELETE FROM {t}")
    con.execute("COMMIT")


def episodes_to_build(
    con: duckdb.DuckDBPyConnection, episode_ids: list[str] | None, *, rebuild: bool
) -> list[str]:
    """Stored episodes to build, in stored order: the given ones, or all not yet built."""
    ensure_context_tables(con)
    if episode_ids is not None:
        rows = con.execute(
            "SELECT episode_id FROM episodes WHERE episode_id IN "
            "(SELECT unnest(?::VARCHAR[])) ORDER BY file_id, seq",
            [episode_ids],
        ).fetchall()
        return [r[0] for r in rows]
    if rebuild:
        rows = con.execute("SELECT episode_id FROM episodes ORDER BY file_id, seq").fetchall()
    else:
        rows = con.execute(
            "SELECT episode_id FROM episodes WHERE episode_id NOT IN "
            "(SELECT episode_id FROM context_built) ORDER BY file_id, seq"
        ).fetchall()
    return [r[0] for r in rows]


def _append(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    cols = _COLS[table]
    arrays = [pa.array(list(col), type=t) for col, (_, t) in zip(zip(*rows), cols)]
    con.register("_ctx_rows", pa.Table.from_arrays(arrays, names=[c for c, _ in cols]))
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM _ctx_rows")
    finally:
        con.unregister("_ctx_rows")


class _Blobs:
    """Collects texts to store as content-addressed blobs; writes only the missing ones."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def add(self, text: str | None, *, stored: bool = False) -> int | None:
        """Hash of `text`; `stored=True` when the text is known to be a stored blob already."""
        if text is None:
            return None
        h = blob_hash(text)
        if not stored:
            self.texts.setdefault(h, text)
        return h

    def write(self, con: duckdb.DuckDBPyConnection) -> None:
        if self.texts:
            append_rows(con, "blobs", list(self.texts.items()), or_ignore=True)


def write_contexts(
    con: duckdb.DuckDBPyConnection, ctxs: list[EpisodeContext], *, replace: bool = True, ensure: bool = True
) -> None:
    """Write built episode contexts (caller holds the transaction); with `replace`, earlier rows of
    those episodes are deleted first. `ensure=False` skips the table check (done once per build)."""
    if ensure:
        ensure_context_tables(con)
    if not ctxs:
        return
    ids = [c.episode_id for c in ctxs]
    if replace:
        built = [
            r[0]
            for r in con.execute(
                "SELECT episode_id FROM context_built WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
                [ids],
            ).fetchall()
        ]
        if built:
            for t in CONTEXT_TABLES:
                con.execute(f"DELETE FROM {t} WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))", [built])
    blobs = _Blobs()
    rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in _COLS}
    now = datetime.now(UTC).replace(tzinfo=None)
    for c in ctxs:
        eid = c.episode_id
        rows["context_built"].append((eid, c.valid, len(c.deliveries), len(c.spans), now))
        for chk in c.checks:
            rows["recording_checks"].append((eid, chk.ok, chk.rule, chk.detail))
        for k, d in enumerate(c.deliveries):
            rows["delivery_context"].append(
                (
                    d.delivery_id,
                    eid,
                    k,
                    d.consuming_step,
                    d.attributed,
                    d.verified,
                    d.span_id,
                    d.restatement,
                    d.chars,
                    d.problem,
                )
            )
            for x in d.entries:
                rows["entry_exposure"].append(
                    (
                        d.delivery_id,
                        x.pos,
                        eid,
                        x.exposure,
                        x.placement_pos,
                        x.stage,
                        blobs.add(x.exposed_text),
                        len(x.exposed_text) if x.exposed_text is not None else None,
                    )
                )
        for k, s in enumerate(c.spans):
            sid = s.span_id
            rows["spans"].append(
                (
                    sid,
                    eid,
                    k,
                    s.status,
                    s.first_step,
                    s.last_step,
                    s.delivery_ids[0] if s.delivery_ids else None,
                    len(s.delivery_ids),
                    s.restatements,
                    len(s.entries),
                    s.chars,
                    s.est_tokens,
                    s.form,
                    s.route,
                    s.reason,
                    list(s.removed_steps),
                )
            )
            for p, did in enumerate(s.delivery_ids):
                rows["span_deliveries"].append((sid, did, p, eid))
            for e in s.entries:
                w = e.window
                rows["span_entries"].append(
                    (
                        sid,
                        e.pos,
                        eid,
                        e.namespace,
                        e.item_id,
                        e.version,
                        e.digest,
                        e.display_key,
                        blobs.add(e.value),
                        e.exposure,
                        e.stage,
                        blobs.add(e.exposed_text),
                        len(e.exposed_text) if e.exposed_text is not None else None,
                        w[0] if w else None,
                        w[1] if w else None,
                        e.resident,
                    )
                )
            for ps in s.prior_sources:
                rows["prior_sources"].append(
                    (
                        sid,
                        ps.pos,
                        eid,
                        "memory_only" if ps.memory_only else "message",
                        ps.message_index,
                        ps.role,
                        # an uncut message without tool calls is its stored content
                        blobs.add(ps.text, stored=not ps.cut and "[tool call " not in ps.text),
                        len(ps.text),
                        json.dumps([list(x) for x in ps.cut]) if ps.cut else None,
                    )
                )
            for ec in s.earlier_copies:
                rows["span_earlier_copies"].append(
                    (sid, ec.entry_pos, eid, ec.delivery_id, ec.step, ec.visibility, ec.contains_target)
                )
    blobs.write(con)
    for t, r in rows.items():
        _append(con, t, r)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


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
            _construct(
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
            _construct(
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
            _construct(
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
            _construct(
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
    import pandas as pd

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
