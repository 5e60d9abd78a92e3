"""Episode queries of the app: the filterable episode table, one episode's header, steps,
deliveries, credit windows and spans, and one step's full text (loaded on demand)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ...vocab import CHARS_PER_TOKEN, MEMORY_STATES
from ..blobs import iter_blob_texts
from ..episode_facts import response_parts
from ..judging import resolve_judge, verdicts_of
from ._sql import episode_outcome, frame, scope
from .outcomes import spans_with_outcome

_NONE, _NOT_BUILT, _BUILT = MEMORY_STATES


def _search_hits(con: duckdb.DuckDBPyConnection, search: str) -> None:
    """Temp table `_hits` of the episodes whose task, actions, responses or observations contain
    `search` (case-insensitive): one scan of the text blobs, then hashes mapped to episodes."""
    needle = search.lower()
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE _hits AS
        WITH hit AS MATERIALIZED (SELECT hash FROM blobs WHERE contains(lower(text), ?))
        SELECT episode_id FROM episodes WHERE task_hash IN (SELECT hash FROM hit)
        UNION SELECT episode_id FROM steps
          WHERE contains(lower(action), ?) OR response_hash IN (SELECT hash FROM hit)
        UNION SELECT episode_id FROM (SELECT episode_id, unnest(obs_hashes) AS h FROM steps)
          WHERE h IN (SELECT hash FROM hit)""",
        [needle, needle],
    )


def episode_table(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | None = None,
    *,
    search: str | None = None,
    outcomes: Sequence[str] = (),
    span_classes: Sequence[str] = (),
    repos: Sequence[str] = (),
    task_contains: str | None = None,
    limit: int = 5000,
    judge: str | None = None,
) -> pd.DataFrame:
    """One row per episode in scope: config, run, repo, task, outcome, harness status (the
    harness report's, NULL when none set the outcome), exit status, steps, deliveries, memory
    state (`vocab.MemoryState`), the outcome classes of its spans (as one judge's verdicts see
    them, default `resolve_judge`), counts, estimated delivered
    tokens and recorded cost.

    Filters: `search` matches the task and trajectory text; `outcomes` the episode outcome;
    `span_classes` keeps episodes with a span of every listed outcome class; `repos` the
    repository; `task_contains` a substring of the task id (case-insensitive)."""
    where, params = scope(runs)
    if search:
        _search_hits(con, search)
        where += " AND e.episode_id IN (SELECT episode_id FROM _hits)"
    if task_contains:
        where += " AND contains(lower(e.task_id), ?)"
        params.append(task_contains.lower())
    if repos:
        where += " AND e.repo IN (SELECT unnest(?::VARCHAR[]))"
        params.append(list(repos))
    outer, outer_params = ["TRUE"], list[Any]()
    if outcomes:
        outer.append("outcome IN (SELECT unnest(?::VARCHAR[]))")
        outer_params.append(list(outcomes))
    if span_classes:
        outer.append("list_has_all(span_classes, ?::VARCHAR[])")
        outer_params.append(list(span_classes))
    with spans_with_outcome(con, runs, judge=judge) as rel:
        return frame(
            con,
            f"""
            WITH cost AS (SELECT episode_id, sum(cost_usd) AS cost_usd, sum(input_tokens) AS input_tokens,
                                 sum(output_tokens) AS output_tokens
                          FROM calls GROUP BY 1),
                 sp AS (SELECT episode_id, list_sort(list_distinct(list(outcome))) AS span_classes,
                               count(*) AS spans, sum(est_tokens) AS span_tokens
                        FROM {rel} GROUP BY 1),
                 dl AS (SELECT episode_id, count(*) AS deliveries, sum(chars) AS chars
                        FROM deliveries GROUP BY 1)
            SELECT * FROM (
                SELECT e.episode_id, r.config, e.run_id, e.repo, e.task_id,
                       {episode_outcome()} AS outcome, o.status AS harness_status, e.exit_status,
                       e.n_steps AS steps, coalesce(dl.deliveries, 0) AS deliveries,
                       CASE WHEN coalesce(dl.deliveries, 0) = 0 THEN '{_NONE}'
                            WHEN cb.episode_id IS NULL THEN '{_NOT_BUILT}' ELSE '{_BUILT}' END AS memory_state,
                       coalesce(sp.spans, 0) AS spans,
                       coalesce(sp.span_classes, []::VARCHAR[]) AS span_classes,
                       coalesce(sp.span_tokens, dl.chars // {CHARS_PER_TOKEN}, 0) AS delivered_tokens,
                       cost.cost_usd, cost.input_tokens, cost.output_tokens,
                       r.config AS _c, e.position AS _p
                FROM episodes e LEFT JOIN runs r USING (run_id) LEFT JOIN cost USING (episode_id)
                     LEFT JOIN sp USING (episode_id) LEFT JOIN dl USING (episode_id)
                     LEFT JOIN episode_outcomes o USING (episode_id)
                     LEFT JOIN context_built cb USING (episode_id)
                WHERE {where})
            WHERE {" AND ".join(outer)}
            ORDER BY _c, run_id, _p, episode_id
            LIMIT {int(limit)}""",
            params + outer_params,
        ).drop(columns=["_c", "_p"])


def episode_repos(con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None) -> list[str]:
    """Repositories of the episodes in scope, sorted."""
    where, params = scope(runs)
    rows = con.execute(
        f"SELECT DISTINCT e.repo FROM episodes e WHERE e.repo IS NOT NULL AND {where} ORDER BY 1", params
    ).fetchall()
    return [r[0] for r in rows]


def episode_ids(
    con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None, with_deliveries: bool = False
) -> list[str]:
    """Episode ids in scope, in run order (for pickers); optionally only those with deliveries."""
    where, params = scope(runs)
    if with_deliveries:
        where += " AND e.episode_id IN (SELECT DISTINCT episode_id FROM deliveries)"
    rows = con.execute(
        f"SELECT e.episode_id FROM episodes e WHERE {where} ORDER BY e.run_id, e.position, e.episode_id",
        params,
    ).fetchall()
    return [r[0] for r in rows]


def episode_header(con: duckdb.DuckDBPyConnection, episode_id: str) -> dict[str, Any] | None:
    """Run, config, task text, outcome and counts of one episode (None when unknown)."""
    cur = con.execute(
        f"""
        SELECT e.episode_id, e.run_id, r.config, e.task_id, e.repo, {episode_outcome()} AS outcome,
               e.exit_status, e.n_steps, e.position, e.task_hash, e.reference_hash
        FROM episodes e LEFT JOIN runs r USING (run_id) WHERE e.episode_id = ?""",
        [episode_id],
    )
    row = cur.fetchone()
    if row is None:
        return None
    out = dict(zip([d[0] for d in cur.description], row))
    task_hash, ref_hash = out.pop("task_hash"), out.pop("reference_hash")
    texts = iter_blob_texts(con, [h for h in (task_hash, ref_hash) if h is not None])
    out["task"] = texts.get(task_hash, "") if task_hash is not None else ""
    out["reference"] = texts.get(ref_hash) if ref_hash is not None else None
    return out


def episode_steps(con: duckdb.DuckDBPyConnection, episode_id: str) -> pd.DataFrame:
    """Step summaries (no text bodies): action, tools, exit code, observation size, usage."""
    return frame(
        con,
        """
        SELECT s.step, s.call_id, s.action, s.tools, s.exit_code, s.obs_chars,
               c.input_tokens, c.output_tokens, c.cost_usd
        FROM steps s LEFT JOIN calls c USING (call_id)
        WHERE s.episode_id = ? ORDER BY s.step""",
        [episode_id],
    )


def step_text(con: duckdb.DuckDBPyConnection, episode_id: str, step: int) -> dict[str, Any] | None:
    """The full response, its reasoning text (None when the provider returned none), tool calls
    and tool results of one step (loaded on demand)."""
    row = con.execute(
        """SELECT call_id, action, tools, exit_code, response_hash, obs_hashes
           FROM steps WHERE episode_id = ? AND step = ?""",
        [episode_id, step],
    ).fetchone()
    if row is None:
        return None
    call_id, action, tools, exit_code, rh, obs = row
    trs = con.execute(
        "SELECT name, arguments_hash, output_hash, exit_code FROM tool_results WHERE call_id = ? ORDER BY seq",
        [call_id],
    ).fetchall()
    hashes = [rh, *(obs or []), *(h for t in trs for h in (t[1], t[2]))]
    texts = iter_blob_texts(con, [h for h in hashes if h is not None])
    resp = response_parts(texts.get(rh) if rh is not None else None)
    if trs:
        results = [
            {
                "name": n,
                "arguments": texts.get(a, "") if a is not None else "",
                "output": texts.get(o, "") if o is not None else "",
                "exit_code": c,
            }
            for n, a, o, c in trs
        ]
    else:
        results = [
            {"name": "observation", "arguments": "", "output": texts.get(h, ""), "exit_code": exit_code}
            for h in (obs or [])
        ]
    return {
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


def episode_deliveries(con: duckdb.DuckDBPyConnection, episode_id: str) -> pd.DataFrame:
    """Deliveries of an episode with their consuming step and span (when built)."""
    return frame(
        con,
        """
        SELECT d.delivery_id, d.route, d.form, d.n_entries, d.chars,
               coalesce(dc.consuming_step, st.step) AS step, dc.span_id, dc.restatement,
               dc.verified, dc.problem
        FROM deliveries d LEFT JOIN delivery_context dc USING (delivery_id)
             LEFT JOIN steps st ON st.call_id = d.consuming_call_id
        WHERE d.episode_id = ? ORDER BY step NULLS LAST, d.seq""",
        [episode_id],
    )


def episode_entries(
    con: duckdb.DuckDBPyConnection, episode_id: str, judge: str | None = None
) -> pd.DataFrame:
    """Span entries of an episode with credit windows and the assessment of the entry by one
    judge's current verdict (default `resolve_judge`)."""
    judge = resolve_judge(con, judge)
    return frame(
        con,
        f"""
        SELECT se.span_id, se.pos, se.namespace, se.item_id, se.display_key, se.exposure,
               se.window_start, se.window_end, s.first_step, s.status, s.form,
               a.relevance, a.accuracy, a.novelty, a.influence, a.effect, a.anchors, a.evidence,
               a.usage_label
        FROM span_entries se JOIN spans s USING (span_id)
             LEFT JOIN verdicts v ON {verdicts_of(judge)}
             LEFT JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = se.pos
        WHERE se.episode_id = ? ORDER BY s.first_step NULLS LAST, se.span_id, se.pos""",
        [episode_id],
    )


def episode_spans(con: duckdb.DuckDBPyConnection, episode_id: str, judge: str | None = None) -> pd.DataFrame:
    """Spans of an episode with their status and outcome class (one judge's, default
    `resolve_judge`)."""
    with spans_with_outcome(con, episode_ids=[episode_id], judge=judge) as rel:
        return frame(
            con,
            f"""
            SELECT s.span_id, o.outcome, s.status, s.first_step, s.last_step, s.n_entries,
                   s.restatements, s.est_tokens, s.form, s.route, s.reason
            FROM spans s LEFT JOIN {rel} o USING (span_id)
            WHERE s.episode_id = ? ORDER BY s.first_step NULLS LAST, s.span_id""",
            [episode_id],
        )
