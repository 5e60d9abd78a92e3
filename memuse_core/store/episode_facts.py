"""Per-episode facts for the Episodes list and the Timeline header, and the reasoning text stored
with each step's response.

* exit status (the harness's: `Submitted`, `LimitsExceeded`, an exception name) and outcome
  (`episodes.resolved`; NULL = no outcome), with the harness status and report that set it;
* the memory state (`vocab.MemoryState`): `none_delivered` when the recording holds no memory
  delivery at all (nothing to build; "no memory was delivered in this episode"), `not_built` when
  deliveries were recorded but `memuse build` has not built the episode's context, `built`;
* a step's response: content, reasoning (`Response.reasoning`: DeepSeek `reasoning_content`,
  Responses-API reasoning summaries, Anthropic thinking blocks) and tool calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ..vocab import MEMORY_STATES
from .blobs import iter_blob_texts

_NONE, _NOT_BUILT, _BUILT = MEMORY_STATES

_FACTS = f"""
    SELECT e.episode_id, e.run_id, r.config, e.task_id, e.position, e.exit_status, e.resolved,
           o.status AS harness_status, o.source AS outcome_source,
           coalesce(d.n, 0) AS deliveries,
           CASE WHEN coalesce(d.n, 0) = 0 THEN '{_NONE}'
                WHEN c.episode_id IS NULL THEN '{_NOT_BUILT}' ELSE '{_BUILT}' END AS memory_state
    FROM episodes e
    LEFT JOIN runs r USING (run_id)
    LEFT JOIN episode_outcomes o USING (episode_id)
    LEFT JOIN (SELECT episode_id, count(*) AS n FROM deliveries GROUP BY 1) d USING (episode_id)
    LEFT JOIN context_built c USING (episode_id)"""
"""One row per episode: identity, exit status, outcome and its source, deliveries, memory state."""


def episode_facts(
    con: duckdb.DuckDBPyConnection,
    *,
    episode_ids: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Facts of the given episodes (or of the runs' episodes; of every episode when neither is
    given), in run and position order: episode_id, run_id, config, task_id, position,
    exit_status, resolved (None: no outcome), harness_status, outcome_source, deliveries,
    memory_state."""
    where, args = "TRUE", {}
    if episode_ids is not None:
        where, args = "e.episode_id IN (SELECT unnest($ids::VARCHAR[]))", {"ids": list(episode_ids)}
    elif runs is not None:
        where, args = "e.run_id IN (SELECT unnest($ids::VARCHAR[]))", {"ids": list(runs)}
    return con.execute(f"{_FACTS} WHERE {where} ORDER BY e.run_id, e.position, e.episode_id", args).df()


def step_response(con: duckdb.DuckDBPyConnection, episode_id: str, step: int) -> dict[str, Any] | None:
    """One step's response: call_id, content, reasoning (None when the provider returned none)
    and tool_calls [(name, arguments)]; None when the step is not stored."""
    rows = con.execute(
        "SELECT call_id, response_hash FROM steps WHERE episode_id = ? AND step = ?", [episode_id, step]
    ).fetchall()
    if not rows:
        return None
    call_id, rh = rows[0]
    text = iter_blob_texts(con, [rh]).get(rh) if rh is not None else None
    return {"call_id": call_id, **response_parts(text)}


def episode_reasoning(con: duckdb.DuckDBPyConnection, episode_id: str) -> dict[int, str]:
    """Step -> reasoning text, for the steps of an episode whose response has any (the Timeline
    marks them; the step view shows the text beside the response)."""
    rows = con.execute(
        "SELECT step, response_hash FROM steps WHERE episode_id = ? AND response_hash IS NOT NULL ORDER BY step",
        [episode_id],
    ).fetchall()
    texts = iter_blob_texts(con, {h for _, h in rows})
    out: dict[int, str] = {}
    for step, h in rows:
        r = response_parts(texts.get(h))["reasoning"]
        if r:
            out[int(step)] = r
    return out


def response_parts(text: str | None) -> dict[str, Any]:
    """Content, reasoning (None when absent) and tool calls [(name, arguments)] of a stored model
    response (the `Response` JSON the writer stores; any other text is returned as content)."""
    if text is None:
        return {"content": "", "reasoning": None, "tool_calls": []}
    try:
        resp = json.loads(text)
    except json.JSONDecodeError:
        return {"content": text, "reasoning": None, "tool_calls": []}
    if not isinstance(resp, dict):
        return {"content": text, "reasoning": None, "tool_calls": []}
    calls = [
        (str(tc.get("name", "")), str(tc.get("arguments", "")))
        for tc in resp.get("tool_calls") or []
        if isinstance(tc, dict)
    ]
    reasoning = resp.get("reasoning")
    return {
        "content": resp.get("content") or "",
        "reasoning": reasoning if isinstance(reasoning, str) and reasoning else None,
        "tool_calls": calls,
    }
