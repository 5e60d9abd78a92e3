"""Transcript and search queries of the app: the full text of a range of an episode's steps in
three queries, and text search with hit locations (episode, step, where) and a snippet.

Recorded text is returned as stored (untrusted); the views make it inert for display."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ..blobs import iter_blob_texts
from ..episode_facts import response_parts

SNIPPET_BEFORE, SNIPPET_CHARS = 70, 220
"""A hit's snippet: up to 70 characters before the match, 220 in all."""


def steps_text(
    con: duckdb.DuckDBPyConnection, episode_id: str, first: int, last: int
) -> list[dict[str, Any]]:
    """Responses (with their reasoning text, None when absent), tool calls and tool results (or observations) of steps `first`..`last` of an
    episode, in step order: one query for the steps, one for their tool results, one for texts."""
    rows = con.execute(
        """SELECT step, call_id, action, tools, exit_code, response_hash, obs_hashes
           FROM steps WHERE episode_id = ? AND step BETWEEN ? AND ? ORDER BY step""",
        [episode_id, first, last],
    ).fetchall()
    calls = [r[1] for r in rows if r[1] is not None]
    trs: dict[str, list[tuple[Any, ...]]] = {}
    if calls:
        for call_id, name, a, o, code in con.execute(
            """SELECT call_id, name, arguments_hash, output_hash, exit_code FROM tool_results
               WHERE episode_id = ? AND call_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY call_id, seq""",
            [episode_id, calls],
        ).fetchall():
            trs.setdefault(call_id, []).append((name, a, o, code))
    hashes = [h for r in rows for h in (r[5], *(r[6] or []))]
    hashes += [h for ts in trs.values() for t in ts for h in (t[1], t[2])]
    texts = iter_blob_texts(con, [h for h in hashes if h is not None])
    out = []
    for step, call_id, action, tools, exit_code, rh, obs in rows:
        resp = response_parts(texts.get(rh) if rh is not None else None)
        if trs.get(call_id):
            results = [
                {
                    "name": n,
                    "arguments": texts.get(a, "") if a is not None else "",
                    "output": texts.get(o, "") if o is not None else "",
                    "exit_code": c,
                }
                for n, a, o, c in trs[call_id]
            ]
        else:
            results = [
                {"name": "observation", "arguments": "", "output": texts.get(h, ""), "exit_code": exit_code}
                for h in (obs or [])
            ]
        out.append(
            {
                "step": step,
                "call_id": call_id,
                "action": action,
                "tools": tools,
                "exit_code": exit_code,
                "response": resp["content"],
                "reasoning": resp["reasoning"],
                "tool_calls": resp["tool_calls"],
                "results": results,
            }
        )
    return out


def search_text(
    con: duckdb.DuckDBPyConnection,
    needle: str,
    runs: Sequence[str] | None = None,
    *,
    episode_id: str | None = None,
    limit: int = 200,
) -> pd.DataFrame:
    """Where `needle` occurs (case-insensitive) in tasks, actions, responses, observations and
    tool calls/results of the episodes in scope (or of one episode): episode_id, config, run_id,
    task_id, step (None for the task), where, snippet, match_at (offset of the match in the
    snippet), in run order. One scan of the text blobs (only the episode's blobs with
    `episode_id`), at most `limit` rows."""
    p: dict[str, Any] = {"n": needle.lower(), "runs": None if runs is None else list(runs)}
    mine = ""
    if episode_id is not None:
        p["ep"] = episode_id
        mine = "WHERE episode_id = $ep"
    # With one episode only its own blobs are scanned; else every blob, in one pass.
    own = (
        """AND hash IN (
            SELECT task_hash FROM episodes WHERE episode_id = $ep
            UNION ALL SELECT response_hash FROM steps WHERE episode_id = $ep
            UNION ALL SELECT unnest(obs_hashes) FROM steps WHERE episode_id = $ep
            UNION ALL SELECT arguments_hash FROM tool_results WHERE episode_id = $ep
            UNION ALL SELECT output_hash FROM tool_results WHERE episode_id = $ep)"""
        if episode_id is not None
        else ""
    )
    before, width = SNIPPET_BEFORE, SNIPPET_CHARS
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _text_hits AS
        SELECT hash, q - greatest(1, q - {before}) AS match_at,
               substring(text, greatest(1, q - {before}), {width}) AS snippet
        FROM (SELECT hash, text, instr(lower(text), $n) AS q FROM blobs
              WHERE contains(lower(text), $n) {own})""",
        {k: v for k, v in p.items() if k in ("n", "ep")},
    )
    return con.execute(
        f"""
        WITH st AS (SELECT * FROM steps {mine}),
        tr AS (SELECT t.*, s.step FROM tool_results t JOIN st s USING (call_id)),
        loc AS (
            SELECT episode_id, NULL::INTEGER AS step, 'task' AS "where", task_hash AS hash
              FROM episodes {mine}
            UNION ALL SELECT episode_id, step, 'response', response_hash FROM st
            UNION ALL SELECT episode_id, step, 'observation', unnest(obs_hashes) FROM st
            UNION ALL SELECT episode_id, step, 'tool call ' || coalesce(name, ''), arguments_hash FROM tr
            UNION ALL SELECT episode_id, step, 'tool result ' || coalesce(name, ''), output_hash FROM tr),
        hits AS (
            SELECT loc.episode_id, loc.step, loc."where", h.snippet, h.match_at
            FROM loc JOIN _text_hits h USING (hash)
            UNION ALL
            SELECT episode_id, step, 'action',
                   substring(action, greatest(1, instr(lower(action), $n) - {before}), {width}),
                   instr(lower(action), $n) - greatest(1, instr(lower(action), $n) - {before})
            FROM st WHERE contains(lower(action), $n))
        SELECT h.episode_id, r.config, e.run_id, e.task_id, h.step, h."where", h.snippet, h.match_at
        FROM hits h JOIN episodes e USING (episode_id) LEFT JOIN runs r USING (run_id)
        WHERE $runs::VARCHAR[] IS NULL OR list_contains($runs::VARCHAR[], e.run_id)
        QUALIFY row_number() OVER (PARTITION BY h.episode_id, h.step, h."where") = 1
        ORDER BY r.config, e.run_id, e.position, h.episode_id, h.step NULLS FIRST, h."where"
        LIMIT {int(limit)}""",
        p,
    ).df()
