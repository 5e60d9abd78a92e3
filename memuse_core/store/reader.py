"""Reading events back from the store as whole episodes (`EpisodeRecord`s), one query per table.

The event stream of the whole store (the inverse of ingest) and the store summary are
`store.export`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ..episode import EpisodeRecord, episodes_from_events
from ..events import (
    EVENT_SCHEMA_VERSION,
    EpisodeEnd,
    EpisodeStart,
    Event,
    HistoryRewrite,
    MemoryChange,
    MemorySearch,
    ModelCall,
    Request,
    Response,
    Retraction,
    RunEvent,
    SearchResult,
    ToolResultEvent,
    Usage,
)
from .decode import construct, deliveries_of, delivery_rows, gc_paused, messages_of, shells_of, texts_of


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


def episode_events(
    con: duckdb.DuckDBPyConnection, episode_ids: list[str]
) -> list[tuple[tuple[int, int], Event]]:
    """Every event of the given episodes with its (file_id, seq) sort key."""
    with gc_paused():
        return _events_of(_fetch_rows(con, episode_ids))


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
    dels, ents, pls = delivery_rows(con, ids)
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
    texts = texts_of(con, hashes)
    # calls: resolve nothing here (delta kept as stored); gather shells
    shells: set[int] = set()
    for r in calls:
        shells.update(r[7] or [])
    parsed, contents = shells_of(con, list(shells))
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


def _events_of(rows: EpisodeRows) -> list[tuple[tuple[int, int], Event]]:
    out: list[tuple[tuple[int, int], Event]] = []
    if not rows.tables:
        return out
    tb = rows.tables
    eps, calls, trs, ctx, dels = tb["eps"], tb["calls"], tb["trs"], tb["ctx"], tb["dels"]
    ents, pls, srs, chg = tb["ents"], tb["pls"], tb["srs"], tb["chg"]
    texts = rows.texts
    t = texts.get
    msgs = messages_of(rows.shells, rows.contents)

    V = EVENT_SCHEMA_VERSION
    for r in eps:
        (eid, run_id, task_id, pos, repo, th, rh, resolved, exit_status, sh, ended, fid, seq, eseq) = r
        out.append(
            (
                (fid, seq),
                construct(
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
                    construct(
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
        req = construct(
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
            usage = construct(
                Usage, {"input_tokens": it, "output_tokens": ot, "cached_tokens": ct, "reasoning_tokens": rt}
            )
        out.append(
            (
                (fid, seq),
                construct(
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
                construct(
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
    out.extend(deliveries_of(dels, ents, pls, t))
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
    with gc_paused():
        rows = _fetch_rows(con, list(episode_ids))
        run_ids = sorted({r[1] for r in rows.tables.get("eps", [])})
        rows.runs = run_events(con, run_ids)
    return rows


def build_episodes(rows: EpisodeRows) -> dict[str, EpisodeRecord]:
    """Episode records from fetched rows; needs no connection."""
    with gc_paused():
        evs = [ev for _, ev in _events_of(rows)]
        return episodes_from_events([*(ev for _, ev in rows.runs), *evs])


def run_events(
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
