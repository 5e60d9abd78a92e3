"""Reading events back from the store: whole episodes as `EpisodeRecord`s, the event stream of a
file (lossless round trip), and summaries."""

from __future__ import annotations

import gc
import heapq
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ..episode import EpisodeRecord, episodes_from_events
from ..events import (
    EVENT_SCHEMA_VERSION,
    Entry,
    EpisodeEnd,
    EpisodeStart,
    Event,
    HistoryRewrite,
    MemoryChange,
    MemoryDelivery,
    MemorySearch,
    Message,
    ModelCall,
    Placement,
    Proof,
    Request,
    Response,
    Retraction,
    RunEvent,
    SearchResult,
    ToolCall,
    ToolResultEvent,
    Usage,
    text_digest,
)
from .writer import BLOB_REF, iter_blob_texts


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a chunk of records is built.

    Building records allocates hundreds of thousands of small acyclic objects; every few hundred
    allocations would otherwise trigger a collection that walks the growing heap (measured: ~60%
    of the build time). Reference counting still frees everything; collection resumes after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _texts(con: duckdb.DuckDBPyConnection, hashes: list[int | None]) -> dict[int, str]:
    return iter_blob_texts(con, [h for h in hashes if h is not None])


def _shells(con: duckdb.DuckDBPyConnection, shells: list[int]) -> tuple[dict[int, Any], dict[int, str]]:
    """Message shells (parsed) and the content blobs they reference."""
    shell_text = _texts(con, list(shells))
    loads = json.loads
    parsed = {h: loads(t) for h, t in shell_text.items()}
    refs = [c[BLOB_REF] for d in parsed.values() if isinstance(c := d.get("content"), dict) and BLOB_REF in c]
    return parsed, _texts(con, refs)


def _messages(parsed: dict[int, Any], contents: dict[int, str]) -> dict[int, Message]:
    """Rebuild Message objects from parsed shells and their content blobs.

    Shells were written from validated messages, so they are rebuilt without validating again
    (`_message`); the result equals `Message.model_validate` of the same shell."""
    out = {}
    for h, d in parsed.items():
        c = d.get("content")
        if isinstance(c, dict) and BLOB_REF in c:
            d = {**d, "content": contents[c[BLOB_REF]]}
        out[h] = _message(d)
    return out


_MESSAGE_FIELDS = frozenset(Message.model_fields)
_new = object.__new__
_setattr = object.__setattr__


def _construct(
    cls: Any, values: dict[str, Any], extra: dict[str, Any] | None = None, fields_set: set[str] | None = None
) -> Any:
    """An instance of a pydantic model from already-valid values, without validation.

    `values` must hold every field of `cls` (defaults included); this is what
    `cls.model_construct` does, without its per-field default lookup. Stored rows were validated
    when they were ingested, so validating them again on every load only costs time (the
    round-trip tests compare both paths)."""
    m = _new(cls)
    _setattr(m, "__dict__", values)
    _setattr(m, "__pydantic_fields_set__", set(values) if fields_set is None else fields_set)
    _setattr(m, "__pydantic_extra__", extra)
    _setattr(m, "__pydantic_private__", None)
    return m


def _message(d: dict[str, Any]) -> Message:
    """A Message from a stored shell dict (validated before it was stored)."""
    if not _MESSAGE_FIELDS.issuperset(d):
        extra = {k: v for k, v in d.items() if k not in _MESSAGE_FIELDS}
    else:
        extra = {}
    tcs = d.get("tool_calls")
    if tcs is not None:
        tcs = [
            _construct(
                ToolCall, {"id": tc.get("id"), "name": tc["name"], "arguments": tc.get("arguments", "")}
            )
            for tc in tcs
        ]
    return _construct(
        Message,
        {
            "role": d["role"],
            "content": d.get("content"),
            "name": d.get("name"),
            "tool_call_id": d.get("tool_call_id"),
            "tool_calls": tcs,
        },
        extra,
        {k for k in d if k in _MESSAGE_FIELDS},
    )


@dataclass
class EpisodeRows:
    """The stored rows of some episodes, read with one query per table (`fetch_episode_rows`);
    `build_episodes` turns them into records without the store, so a caller that shares the
    file with other processes can close its connection first."""

    tables: dict[str, list[tuple[Any, ...]]]
    texts: dict[int, str]
    shells: dict[int, Any]
    contents: dict[int, str]
    runs: list[tuple[tuple[int, int], Event]] = field(default_factory=list)


def _episode_events(
    con: duckdb.DuckDBPyConnection, episode_ids: list[str]
) -> list[tuple[tuple[int, int], Event]]:
    """Every event of the given episodes with its (file_id, seq) sort key."""
    with _gc_paused():
        return _events_of(_fetch_rows(con, episode_ids))


def _shared_entry_lists(con: duckdb.DuckDBPyConnection) -> bool:
    """True when the store keeps delivery entries once per distinct list (schema 2)."""
    return bool(
        con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'delivery_entry_rows' "
            "AND schema_name = 'main'"
        ).fetchall()[0][0]
    )


def _delivery_rows(con: duckdb.DuckDBPyConnection, ids: list[str]) -> tuple[list[Any], list[Any], list[Any]]:
    """Delivery, entry and placement rows of some episodes (see `_deliveries_of`)."""
    # Schema 2 keeps each distinct entry list once: restated deliveries point at the first
    # delivery with the same list (`entries_of`), and each list is read once instead of the view's
    # expanded rows. A version-1 file opened read-only (not migrated yet) has every delivery's rows.
    shared = _shared_entry_lists(con)
    list_of = "coalesce(entries_of, delivery_id)" if shared else "delivery_id"
    dels = con.execute(
        "SELECT delivery_id, episode_id, route, form, consuming_call_id, search_id, "
        f"provisional_step, file_id, seq, {list_of} FROM deliveries "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    ).fetchall()
    ents = con.execute(
        "SELECT delivery_id, pos, namespace, item_id, id_scheme, version, version_portable, digest, "
        f"value_hash, display_key, labels FROM {'delivery_entry_rows' if shared else 'delivery_entries'} "
        f"WHERE delivery_id IN (SELECT {list_of} FROM deliveries WHERE episode_id IN "
        "(SELECT unnest(?::VARCHAR[]))) ORDER BY delivery_id, pos",
        [ids],
    ).fetchall()
    pls = con.execute(
        "SELECT delivery_id, pos, slot, kind, text_hash, digest, size, message_index, json_pointer, "
        "message_digest, start FROM placements "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY delivery_id, pos",
        [ids],
    ).fetchall()
    return dels, ents, pls


def _fetch_rows(con: duckdb.DuckDBPyConnection, episode_ids: list[str]) -> EpisodeRows:
    if not episode_ids:
        return EpisodeRows({}, {}, {}, {})
    ids = episode_ids
    eps = con.execute(
        "SELECT episode_id, run_id, task_id, position, repo, task_hash, reference_hash, resolved, "
        "exit_status, submission_hash, ended, file_id, seq, end_seq FROM episodes "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    ).fetchall()
    calls = con.execute(
        "SELECT call_id, episode_id, call_seq, role, status, base_call_id, base_len, msg_hashes, "
        "tools_hash, request_extra, response_hash, input_tokens, output_tokens, cached_tokens, "
        "reasoning_tokens, cost_usd, started_at, ended_at, op_ref, model, file_id, seq FROM calls "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY episode_id, call_seq",
        [ids],
    ).fetchall()
    trs = con.execute(
        "SELECT episode_id, call_id, tool_call_id, name, arguments_hash, output_hash, exit_code, "
        "file_id, seq FROM tool_results WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    ).fetchall()
    ctx = con.execute(
        "SELECT episode_id, type, before_call_id, payload, file_id, seq FROM context_events "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    ).fetchall()
    dels, ents, pls = _delivery_rows(con, ids)
    srs = con.execute(
        "SELECT search_id, episode_id, run_id, route, query_hash, scope, results, file_id, seq "
        "FROM searches WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    ).fetchall()
    chg = con.execute(
        "SELECT namespace, item_id, version, op, value_hash, episode_id, run_id, op_ref, changed_at, "
        "file_id, seq FROM item_events WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    ).fetchall()

    hashes: list[int | None] = []
    for r in eps:
        hashes += [r[5], r[6], r[9]]
    for r in calls:
        hashes += [r[8], r[10]]
    for r in trs:
        hashes += [r[4], r[5]]
    for r in ents:
        hashes.append(r[8])
    for r in pls:
        hashes.append(r[4])
    for r in srs:
        hashes.append(r[4])
    for r in chg:
        hashes.append(r[4])
    texts = _texts(con, hashes)
    # calls: resolve nothing here (delta kept as stored); gather shells
    shells: set[int] = set()
    for r in calls:
        shells.update(r[7] or [])
    parsed, contents = _shells(con, list(shells))
    return EpisodeRows(
        {
            "eps": eps,
            "calls": calls,
            "trs": trs,
            "ctx": ctx,
            "dels": dels,
            "ents": ents,
            "pls": pls,
            "srs": srs,
            "chg": chg,
        },
        texts,
        parsed,
        contents,
    )


def _shared_by_delivery(rows: list[tuple[Any, ...]], make: Any) -> dict[str, list[Any]]:
    """Rows `(delivery_id, pos, *value)` grouped by delivery in row order; equal values become one
    object, built once by `make(value)`."""
    by: dict[str, list[Any]] = {}
    seen: dict[tuple[Any, ...], Any] = {}
    for r in rows:
        key = r[2:]
        obj = seen.get(key)
        if obj is None:
            obj = seen[key] = make(key)
        lst = by.get(r[0])
        if lst is None:
            by[r[0]] = [obj]
        else:
            lst.append(obj)
    return by


def _deliveries_of(
    dels: list[tuple[Any, ...]], ents: list[tuple[Any, ...]], pls: list[tuple[Any, ...]], t: Any
) -> list[tuple[tuple[int, int], MemoryDelivery]]:
    """Delivery events from their stored rows (`t` looks a blob's text up by hash); shared by the
    episode reader and the judge's evidence loader (`store.evidence`)."""
    V = EVENT_SCHEMA_VERSION
    out: list[tuple[tuple[int, int], MemoryDelivery]] = []

    # A host block restated on every call repeats the same entries and placements many times
    # (a demo episode: ~200 entry rows, ~8 distinct); equal rows share one object, as equal
    # message shells already do. Loaded records are values: rules read them, nothing mutates them.
    def entry(key: tuple[Any, ...]) -> Entry:
        (ns, iid, scheme, ver, portable, dg, vh, dk, labels) = key
        value = t(vh) if vh is not None else None
        if dg is None and value is not None:  # as Entry's validator fills it
            dg = text_digest(value)
        return _construct(
            Entry,
            {  # type: ignore[no-any-return]
                "namespace": ns,
                "item_id": iid,
                "id_scheme": scheme,
                "version": ver,
                "version_portable": portable,
                "digest": dg,
                "value": value,
                "display_key": dk,
                "labels": json.loads(labels) if labels else {},
            },
        )

    def placement(key: tuple[Any, ...]) -> Placement:
        (slot, kind, th, dg, size, mi, jp, md, start) = key
        proof = None
        if mi is not None or jp is not None or md is not None or start is not None:
            proof = _construct(
                Proof,
                {
                    "message_index": mi,
                    "json_pointer": jp,
                    "message_digest": md,
                    "start": start,
                    "verified": None,
                    "problem": None,
                },
                fields_set={"message_index", "json_pointer", "message_digest", "start"},
            )
        text = t(th) if th is not None else None
        if dg is None and text is not None:  # as Placement's validator fills it
            dg = text_digest(text)
        return _construct(
            Placement,
            {  # type: ignore[no-any-return]
                "slot": slot,
                "kind": kind,
                "text": text,
                "digest": dg,
                "size": None if text is not None else size,
                "proof": proof,
            },
        )

    ent_by = _shared_by_delivery(ents, entry)
    pl_by = _shared_by_delivery(pls, placement)
    for r in dels:
        (did, eid, route, form, ccid, sid, pstep, fid, seq, list_of) = r
        out.append(
            (
                (fid, seq),
                _construct(
                    MemoryDelivery,
                    {
                        "type": "memory_delivery",
                        "v": V,
                        "episode_id": eid,
                        "delivery_id": did,
                        "route": route,
                        "form": form,
                        "consuming_call_id": ccid,
                        "search_id": sid,
                        "entries": list(ent_by.get(list_of, ())),
                        "placements": pl_by.get(did, []),
                        "provisional_step": pstep,
                    },
                ),
            )
        )
    return out


def _events_of(rows: EpisodeRows) -> list[tuple[tuple[int, int], Event]]:
    out: list[tuple[tuple[int, int], Event]] = []
    if not rows.tables:
        return out
    tb = rows.tables
    eps, calls, trs, ctx, dels = tb["eps"], tb["calls"], tb["trs"], tb["ctx"], tb["dels"]
    ents, pls, srs, chg = tb["ents"], tb["pls"], tb["srs"], tb["chg"]
    texts = rows.texts
    t = texts.get
    msgs = _messages(rows.shells, rows.contents)

    V = EVENT_SCHEMA_VERSION
    for r in eps:
        (eid, run_id, task_id, pos, repo, th, rh, resolved, exit_status, sh, ended, fid, seq, eseq) = r
        out.append(
            (
                (fid, seq),
                _construct(
                    EpisodeStart,
                    {
                        "type": "episode_start",
                        "v": V,
                        "episode_id": eid,
                        "run_id": run_id,
                        "task_id": task_id,
                        "position": pos,
                        "repo": repo,
                        "task": t(th) if th is not None else None,
                        "reference": t(rh) if rh is not None else None,
                    },
                ),
            )
        )
        if ended:
            out.append(
                (
                    (fid, eseq),
                    _construct(
                        EpisodeEnd,
                        {
                            "type": "episode_end",
                            "v": V,
                            "episode_id": eid,
                            "resolved": resolved,
                            "exit_status": exit_status,
                            "submission": t(sh) if sh is not None else None,
                        },
                    ),
                )
            )
    tools_json: dict[int, Any] = {}
    resp_json = Response.model_validate_json  # small, and cheap to validate in pydantic-core
    for r in calls:
        (
            cid,
            eid,
            _cs,
            role,
            status,
            base_id,
            base_len,
            mh,
            toh,
            rx,
            rsh,
            it,
            ot,
            ct,
            rt,
            cost,
            sa,
            ea,
            op,
            model,
            fid,
            seq,
        ) = r
        tools = None
        if toh is not None:
            tools = tools_json.get(toh)
            if tools is None:
                tools = tools_json[toh] = json.loads(texts[toh])
            tools = list(tools)  # each request owns its list (shared schema dicts, as stored once)
        req = _construct(
            Request,
            {
                "messages": [msgs[h] for h in (mh or [])],
                "tools": tools,
                "base_call_id": base_id,
                "base_len": base_len,
            },
            json.loads(rx) if rx else {},
        )
        resp = resp_json(texts[rsh]) if rsh is not None else None
        usage = None
        if it is not None or ot is not None or ct is not None or rt is not None:
            usage = _construct(
                Usage, {"input_tokens": it, "output_tokens": ot, "cached_tokens": ct, "reasoning_tokens": rt}
            )
        out.append(
            (
                (fid, seq),
                _construct(
                    ModelCall,
                    {
                        "type": "model_call",
                        "v": V,
                        "episode_id": eid,
                        "call_id": cid,
                        "role": role,
                        "request": req,
                        "response": resp,
                        "usage": usage,
                        "cost_usd": cost,
                        "status": status,
                        "started_at": sa,
                        "ended_at": ea,
                        "op_ref": op,
                        "model": model,
                    },
                ),
            )
        )
    for r in trs:
        (eid, cid, tcid, name, ah, oh, code, fid, seq) = r
        out.append(
            (
                (fid, seq),
                _construct(
                    ToolResultEvent,
                    {
                        "type": "tool_result",
                        "v": V,
                        "episode_id": eid,
                        "call_id": cid,
                        "tool_call_id": tcid,
                        "name": name,
                        "arguments": t(ah) if ah is not None else None,
                        "output": (t(oh) or "") if oh is not None else "",
                        "exit_code": code,
                    },
                ),
            )
        )
    for r in ctx:
        (eid, typ, before, payload, fid, seq) = r
        data = json.loads(payload)
        ev: Event
        if typ == "retraction":
            ev = Retraction(episode_id=eid, before_call_id=before, **data)
        else:
            ev = HistoryRewrite(episode_id=eid, before_call_id=before, **data)
        out.append(((fid, seq), ev))
    out.extend(_deliveries_of(dels, ents, pls, t))
    for r in srs:
        (sid, eid, run_id, route, qh, scope, results, fid, seq) = r
        out.append(
            (
                (fid, seq),
                MemorySearch(
                    search_id=sid,
                    episode_id=eid,
                    run_id=run_id,
                    route=route,
                    query=t(qh) if qh is not None else None,
                    scope=scope,
                    results=[SearchResult.model_validate(x) for x in json.loads(results)],
                ),
            )
        )
    for r in chg:
        (ns, iid, ver, op, vh, eid, run_id, op_ref, at, fid, seq) = r
        out.append(
            (
                (fid, seq),
                MemoryChange(
                    namespace=ns,
                    item_id=iid,
                    version=ver,
                    op=op,
                    value=t(vh) if vh is not None else None,
                    episode_id=eid,
                    run_id=run_id,
                    op_ref=op_ref,
                    at=at,
                ),
            )
        )
    out.sort(key=lambda x: x[0])
    return out


def load_episode(con: duckdb.DuckDBPyConnection, episode_id: str) -> EpisodeRecord:
    """The full record of one stored episode (raises KeyError when it is not stored)."""
    recs = load_episodes(con, [episode_id])
    if episode_id not in recs:
        raise KeyError(f"episode {episode_id!r} is not in the store")
    return recs[episode_id]


def load_episodes(con: duckdb.DuckDBPyConnection, episode_ids: list[str]) -> dict[str, EpisodeRecord]:
    """Full records of several episodes, loaded with one query per table."""
    return build_episodes(fetch_episode_rows(con, episode_ids))


def fetch_episode_rows(con: duckdb.DuckDBPyConnection, episode_ids: list[str]) -> EpisodeRows:
    """Read the stored rows of several episodes (and their runs), one query per table; see
    `build_episodes`. `load_episodes(con, ids) == build_episodes(fetch_episode_rows(con, ids))`."""
    with _gc_paused():
        rows = _fetch_rows(con, list(episode_ids))
        run_ids = sorted({r[1] for r in rows.tables.get("eps", [])})
        rows.runs = _run_events(con, run_ids)
    return rows


def build_episodes(rows: EpisodeRows) -> dict[str, EpisodeRecord]:
    """Episode records from fetched rows; needs no connection."""
    with _gc_paused():
        evs = [ev for _, ev in _events_of(rows)]
        return episodes_from_events([*(ev for _, ev in rows.runs), *evs])


def _run_events(
    con: duckdb.DuckDBPyConnection, run_ids: list[str] | None
) -> list[tuple[tuple[int, int], Event]]:
    q = "SELECT run_id, config, label, agent, model, meta, file_id, seq FROM runs"
    rows = (
        con.execute(q + " WHERE run_id IN (SELECT unnest(?::VARCHAR[]))", [run_ids]).fetchall()
        if run_ids is not None
        else con.execute(q).fetchall()
    )
    return [
        (
            (r[6], r[7]),
            RunEvent(
                run_id=r[0],
                config=r[1],
                label=r[2],
                agent=r[3],
                model=r[4],
                meta=json.loads(r[5]) if r[5] else {},
            ),
        )
        for r in rows
    ]


def export_events(con: duckdb.DuckDBPyConnection, *, batch: int = 200) -> Iterator[Event]:
    """Every stored event in recorded order (file, then line): the inverse of ingest.

    Episode-less memory changes and searches (a shared corpus) are included. Requests come back
    delta-encoded against the previous call, which resolves to the same full inputs.
    """
    streams: list[list[tuple[tuple[int, int], Event]]] = [_run_events(con, None)]
    eids = [r[0] for r in con.execute("SELECT episode_id FROM episodes ORDER BY file_id, seq").fetchall()]
    for i in range(0, len(eids), batch):
        streams.append(_episode_events(con, eids[i : i + batch]))
    # episode-less events
    rows = con.execute(
        "SELECT namespace, item_id, version, op, value_hash, episode_id, run_id, op_ref, changed_at, file_id, "
        "seq FROM item_events WHERE episode_id IS NULL"
    ).fetchall()
    texts = _texts(con, [r[4] for r in rows])
    streams.append(
        [
            (
                (r[9], r[10]),
                MemoryChange(
                    namespace=r[0],
                    item_id=r[1],
                    version=r[2],
                    op=r[3],
                    value=texts.get(r[4]) if r[4] is not None else None,
                    episode_id=None,
                    run_id=r[6],
                    op_ref=r[7],
                    at=r[8],
                ),
            )
            for r in rows
        ]
    )
    srows = con.execute(
        "SELECT search_id, episode_id, run_id, route, query_hash, scope, results, file_id, seq "
        "FROM searches WHERE episode_id IS NULL"
    ).fetchall()
    texts = _texts(con, [r[4] for r in srows])
    streams.append(
        [
            (
                (r[7], r[8]),
                MemorySearch(
                    search_id=r[0],
                    episode_id=None,
                    run_id=r[2],
                    route=r[3],
                    query=texts.get(r[4]) if r[4] is not None else None,
                    scope=r[5],
                    results=[SearchResult.model_validate(x) for x in json.loads(r[6])],
                ),
            )
            for r in srows
        ]
    )
    for s in streams:
        s.sort(key=lambda x: x[0])
    for _, ev in heapq.merge(*streams, key=lambda x: x[0]):
        yield ev


def store_info(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Counts and sizes of what the store holds."""

    def one(sql: str) -> Any:
        return con.execute(sql).fetchone()[0]  # type: ignore[index]

    info: dict[str, Any] = {
        "runs": one("SELECT count(*) FROM runs"),
        "configs": one("SELECT count(DISTINCT config) FROM runs"),
        "episodes": one("SELECT count(*) FROM episodes"),
        "steps": one("SELECT count(*) FROM steps"),
        "model_calls": one("SELECT count(*) FROM calls"),
        "tool_results": one("SELECT count(*) FROM tool_results"),
        "deliveries": one("SELECT count(*) FROM deliveries"),
        "delivery_entries": one("SELECT count(*) FROM delivery_entries"),
        "items": one(
            "SELECT count(*) FROM (SELECT DISTINCT namespace, item_id FROM item_events "
            "UNION SELECT DISTINCT namespace, item_id FROM delivery_entries WHERE item_id IS NOT NULL)"
        ),
        "memory_changes": one("SELECT count(*) FROM item_events"),
        "searches": one("SELECT count(*) FROM searches"),
        "files": one("SELECT count(*) FROM files"),
        "blobs": one("SELECT count(*) FROM blobs"),
        "unique_text_chars": one("SELECT coalesce(sum(length(text)), 0) FROM blobs"),
        "spans": one("SELECT count(*) FROM spans"),
        "judgments": one("SELECT count(*) FROM judgments"),
    }
    return info
