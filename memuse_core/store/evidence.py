"""The judge's evidence loader: step and memory files of stored episodes, read straight from the
store (MemUse A.2.1 "Step records") instead of through whole episode records.

Loading episodes was a third of a rules-judge batch, mostly spent rebuilding every input message
of every call. The step files need much less: each step's response, its observations with their
tool-result headers, the episode's deliveries, and, for memory delivered inside an input message,
that message's role. This module reads exactly those rows:

* `steps` (written at ingest by the step rule of `episode.finish_steps`): the completed agent calls
  in order and, for text-action harnesses, the hashes of the observation messages;
* `tool_results` of those calls, in recorded order (the observations of tool-calling harnesses);
* deliveries, entries and placements, built by the episode reader's own code;
* the role of the one input message a placement proof points at, resolved through the calls'
  delta-encoded message lists and that message's stored shell.

`episode_sources` decodes them; `judge.evidence` renders the same `EpisodeEvidence` from them that
`episode_evidence(record)` gives; tests compare both paths on hand-made, demo and real episodes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import duckdb

from ..events import MemoryDelivery, Response
from .blobs import blob_hash, iter_blob_texts
from .decode import deliveries_of, delivery_rows

_EMPTY = blob_hash("")


class ToolHead(NamedTuple):
    """Name and exit code of a tool result (what heads its observation in a step file)."""

    name: str | None
    exit_code: int | None


class StepSource(NamedTuple):
    """What a step file is rendered from: step number, response, observations and the tool
    results whose names and exit codes head them (items with `.name` and `.exit_code`)."""

    t: int
    response: Response | None
    observations: list[str]
    tool_results: Sequence[Any]


@dataclass
class EpisodeSources:
    """What the judge's evidence of one episode is rendered from (`judge.evidence`)."""

    episode_id: str
    task: str
    reference: str | None
    steps: list[StepSource]
    deliveries: list[MemoryDelivery]
    call_step: dict[str, int | None]
    """Call id -> the step it completed."""
    roles: dict[tuple[str, int], str]
    """(call id, message index) -> role, for the input messages placement proofs point at."""


@dataclass
class EvidenceRows:
    """The stored rows behind some episodes' evidence (`fetch_evidence_rows`); `episode_sources`
    decodes them without the connection."""

    eps: list[tuple[Any, ...]]
    steps: list[tuple[Any, ...]]
    tool_results: list[tuple[Any, ...]]
    dels: list[tuple[Any, ...]]
    ents: list[tuple[Any, ...]]
    pls: list[tuple[Any, ...]]
    texts: dict[int, str]
    roles: dict[tuple[str, int], str]
    """(call_id, message index) -> role, for every index a placement proof of a delivery points at."""


def fetch_evidence_rows(con: duckdb.DuckDBPyConnection, episode_ids: list[str]) -> EvidenceRows:
    """Read what the evidence of the given episodes needs, one query per table."""
    ids = [list(episode_ids)]
    eps = con.execute(
        "SELECT episode_id, task_hash, reference_hash FROM episodes "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        ids,
    ).fetchall()
    steps = con.execute(
        "SELECT episode_id, step, call_id, response_hash, obs_hashes FROM steps "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY episode_id, step",
        ids,
    ).fetchall()
    trs = con.execute(
        "SELECT call_id, name, output_hash, exit_code FROM tool_results "
        "WHERE episode_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY file_id, seq",
        ids,
    ).fetchall()
    dels, ents, pls = delivery_rows(con, ids[0])
    roles = _proof_roles(con, steps, dels, pls)
    with_tools = {r[0] for r in trs}
    hashes: list[int | None] = []
    for r in eps:
        hashes += [r[1], r[2]]
    for r in steps:
        hashes.append(r[3])
        if r[2] not in with_tools:
            hashes += r[4] or []
    hashes += [r[2] for r in trs]
    hashes += [r[8] for r in ents]
    hashes += [r[4] for r in pls]
    texts = iter_blob_texts(con, [h for h in hashes if h is not None])
    return EvidenceRows(eps, steps, trs, dels, ents, pls, texts, roles)


def _proof_roles(
    con: duckdb.DuckDBPyConnection,
    steps: list[tuple[Any, ...]],
    dels: list[tuple[Any, ...]],
    pls: list[tuple[Any, ...]],
) -> dict[tuple[str, int], str]:
    """Roles of the input messages that placement proofs point at, for deliveries consumed by a
    step after the first (only those can have arrived in a step's results)."""
    step_of = {r[2]: r[1] for r in steps}
    consumer = {r[0]: r[4] for r in dels if r[4] is not None and (step_of.get(r[4]) or 0) >= 2}
    wanted: set[tuple[str, int]] = set()
    for r in pls:
        cid = consumer.get(r[0])
        if cid is not None and r[7] is not None and r[7] >= 0:
            wanted.add((cid, r[7]))
    if not wanted:
        return {}
    call_ids = sorted({c for c, _ in wanted})
    rows = con.execute(
        "WITH RECURSIVE chain(call_id) AS (SELECT unnest(?::VARCHAR[]) UNION "
        "SELECT c.base_call_id FROM calls c JOIN chain ON c.call_id = chain.call_id "
        "WHERE c.base_call_id IS NOT NULL) "
        "SELECT call_id, base_call_id, base_len, msg_hashes FROM calls WHERE call_id IN (SELECT call_id FROM chain)",
        [call_ids],
    ).fetchall()
    calls = {r[0]: r[1:] for r in rows}
    full: dict[str, list[int] | None] = {}

    def resolve(cid: str) -> list[int] | None:
        """A call's full input as message hashes (delta requests expanded), None if unresolvable."""
        path = []
        cur: str | None = cid
        while cur is not None and cur not in full:
            row = calls.get(cur)
            if row is None:
                full[cur] = None
                break
            path.append(cur)
            cur = row[0]
        for c in reversed(path):
            base_id, base_len, mh = calls[c]
            own = list(mh or [])
            if base_id is None:
                full[c] = own
                continue
            base = full.get(base_id)
            n = len(base) if base is not None and base_len is None else base_len
            full[c] = None if base is None or n is None or n > len(base) else base[:n] + own
        return full.get(cid)

    at: dict[tuple[str, int], int] = {}
    for cid, i in wanted:
        msgs = resolve(cid)
        if msgs is not None and i < len(msgs):
            at[(cid, i)] = msgs[i]
    shells = iter_blob_texts(con, set(at.values()))
    role = {h: json.loads(shells[h])["role"] for h in shells}  # once per distinct message shell
    return {k: role[h] for k, h in at.items()}


def episode_sources(rows: EvidenceRows) -> dict[str, EpisodeSources]:
    """The decoded sources of each episode's evidence (no connection needed)."""
    texts = rows.texts
    t = texts.get
    tools: dict[str, list[tuple[str, ToolHead]]] = {}
    for cid, name, oh, code in rows.tool_results:
        tools.setdefault(cid, []).append(((t(oh) or "") if oh is not None else "", ToolHead(name, code)))
    resp_json = Response.model_validate_json
    steps: dict[str, list[StepSource]] = {}
    call_step: dict[str, dict[str, int | None]] = {}
    for eid, step, cid, rh, obs in rows.steps:
        trs = tools.get(cid)
        if trs:
            observations, heads = [o for o, _ in trs], [h for _, h in trs]
        else:  # text-action harness: the observation messages stored with the step
            observations, heads = [texts[h] if h != _EMPTY else t(h, "") for h in (obs or [])], []
        steps.setdefault(eid, []).append(
            StepSource(step, resp_json(texts[rh]) if rh is not None else None, observations, heads)
        )
        call_step.setdefault(eid, {})[cid] = step
    dels: dict[str, list[Any]] = {}
    for _, d in sorted(deliveries_of(rows.dels, rows.ents, rows.pls, t), key=lambda x: x[0]):
        dels.setdefault(d.episode_id, []).append(d)
    out = {}
    for eid, th, rh in rows.eps:
        out[eid] = EpisodeSources(
            eid,
            (t(th) or "") if th is not None else "",
            t(rh) if rh is not None else None,
            steps.get(eid, []),
            dels.get(eid, []),
            call_step.get(eid, {}),
            rows.roles,
        )
    return out
