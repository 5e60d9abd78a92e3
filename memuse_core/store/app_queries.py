"""Read (and annotation write) queries of the Streamlit app.

Pages hold no SQL: every page calls one of these functions with an open connection and gets a
pandas DataFrame or plain values back. Derived and judged tables may still be empty (the context
build or the judge has not run yet); every function then returns an empty frame rather than
failing, and the page says what to run.

Scopes are lists of run ids (None = every run). Text is fetched lazily, one step or one span at a
time: no function here loads the step text of a whole episode or corpus.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pandas as pd

from .writer import iter_blob_texts


def _df(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
    return con.execute(sql, params or []).df()


def _scope(runs: list[str] | None, col: str = "e.run_id") -> tuple[str, list[Any]]:
    if runs is None:
        return "TRUE", []
    return f"{col} IN (SELECT unnest(?::VARCHAR[]))", [list(runs)]


def quiet(con: duckdb.DuckDBPyConnection) -> None:
    """No progress bar on the server's console for long queries."""
    con.execute("SET enable_progress_bar = false")


def table_count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Rows of a store table (0 when the table does not exist in an older file)."""
    if table not in _KNOWN_TABLES:
        raise ValueError(f"unknown table {table!r}")
    try:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
    except duckdb.CatalogException:
        return 0


_KNOWN_TABLES = {
    "runs",
    "episodes",
    "steps",
    "calls",
    "deliveries",
    "delivery_entries",
    "spans",
    "span_entries",
    "judgments",
    "assessments",
    "verdicts",
    "annotations",
    "case_studies",
    "trim_results",
    "judge_batches",
    "item_events",
    "delivery_context",
    "prior_sources",
}


# ---- Runs and episodes ----------------------------------------------------------------------


def list_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Runs with their configuration, label and episode counts."""
    return _df(
        con,
        """
        SELECT r.run_id, coalesce(r.config, '(none)') AS config, r.label, r.agent, r.model,
               count(e.episode_id) AS episodes,
               avg(CASE WHEN e.resolved THEN 1.0 WHEN e.resolved = FALSE THEN 0.0 END) AS resolve_rate
        FROM runs r LEFT JOIN episodes e USING (run_id)
        GROUP BY ALL ORDER BY config, r.run_id""",
    )


def episode_table(
    con: duckdb.DuckDBPyConnection,
    runs: list[str] | None = None,
    search: str | None = None,
    limit: int = 5000,
) -> pd.DataFrame:
    """One row per episode: config, run, repo, task, outcome, span triage flags, tokens, cost.

    `search` matches (case-insensitively) the task text and the trajectory text: actions,
    responses and observations.
    """
    where, params = _scope(runs)
    if search:
        where += " AND e.episode_id IN (SELECT episode_id FROM _hits)"
        needle = search.lower()
        # One scan of the text blobs, then map matching hashes to episodes.
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
    return _df(
        con,
        f"""
        WITH cost AS (SELECT episode_id, sum(cost_usd) AS cost_usd,
                             sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
                      FROM calls GROUP BY 1),
             sp AS (SELECT s.episode_id, bool_or(v.triage = 'positive') AS has_positive,
                           bool_or(v.triage = 'negative') AS has_negative,
                           bool_or(v.triage = 'unresolved') AS has_unresolved,
                           count(*) AS spans, sum(s.est_tokens) AS span_tokens
                    FROM spans s LEFT JOIN verdicts v USING (span_id) GROUP BY 1),
             dl AS (SELECT episode_id, count(*) AS deliveries, sum(chars) AS chars
                    FROM deliveries GROUP BY 1)
        SELECT e.episode_id, r.config, e.run_id, e.repo, e.task_id,
               CASE WHEN e.resolved THEN 'resolved' WHEN e.resolved = FALSE THEN 'failed'
                    ELSE 'unknown' END AS outcome,
               e.n_steps AS steps, coalesce(dl.deliveries, 0) AS deliveries,
               coalesce(sp.spans, 0) AS spans,
               coalesce(sp.has_positive, FALSE) AS has_positive,
               coalesce(sp.has_negative, FALSE) AS has_negative,
               coalesce(sp.has_unresolved, FALSE) AS has_unresolved,
               coalesce(sp.span_tokens, dl.chars // 4, 0) AS delivered_tokens,
               cost.cost_usd, cost.input_tokens, cost.output_tokens
        FROM episodes e LEFT JOIN runs r USING (run_id) LEFT JOIN cost USING (episode_id)
             LEFT JOIN sp USING (episode_id) LEFT JOIN dl USING (episode_id)
        WHERE {where}
        ORDER BY r.config, e.run_id, e.position, e.episode_id
        LIMIT {int(limit)}""",
        params,
    )


def episode_ids(
    con: duckdb.DuckDBPyConnection, runs: list[str] | None = None, with_deliveries: bool = False
) -> list[str]:
    """Episode ids in scope, in run order (for pickers); optionally only those with deliveries."""
    where, params = _scope(runs)
    if with_deliveries:
        where += " AND e.episode_id IN (SELECT DISTINCT episode_id FROM deliveries)"
    return [
        r[0]
        for r in con.execute(
            f"SELECT e.episode_id FROM episodes e WHERE {where} ORDER BY e.run_id, e.position, e.episode_id",
            params,
        ).fetchall()
    ]


def episode_header(con: duckdb.DuckDBPyConnection, episode_id: str) -> dict[str, Any] | None:
    """Run, config, task text, outcome and counts of one episode (None when unknown)."""
    row = con.execute(
        """
        SELECT e.episode_id, e.run_id, r.config, e.task_id, e.repo, e.resolved, e.exit_status,
               e.n_steps, e.task_hash, e.reference_hash, e.position
        FROM episodes e LEFT JOIN runs r USING (run_id) WHERE e.episode_id = ?""",
        [episode_id],
    ).fetchone()
    if row is None:
        return None
    keys = [
        "episode_id",
        "run_id",
        "config",
        "task_id",
        "repo",
        "resolved",
        "exit_status",
        "n_steps",
        "task_hash",
        "reference_hash",
        "position",
    ]
    out = dict(zip(keys, row))
    texts = iter_blob_texts(con, [h for h in (out["task_hash"], out["reference_hash"]) if h is not None])
    out["task"] = texts.get(out.pop("task_hash"), "") if row[8] is not None else ""
    ref = out.pop("reference_hash")
    out["reference"] = texts.get(ref) if ref is not None else None
    return out


def episode_steps(con: duckdb.DuckDBPyConnection, episode_id: str) -> pd.DataFrame:
    """Step summaries (no text bodies): action, tools, exit code, observation size, usage."""
    return _df(
        con,
        """
        SELECT s.step, s.call_id, s.action, s.tools, s.exit_code, s.obs_chars,
               c.input_tokens, c.output_tokens, c.cost_usd
        FROM steps s LEFT JOIN calls c USING (call_id)
        WHERE s.episode_id = ? ORDER BY s.step""",
        [episode_id],
    )


def step_text(con: duckdb.DuckDBPyConnection, episode_id: str, step: int) -> dict[str, Any] | None:
    """The full response and tool results of one step (loaded on demand)."""
    row = con.execute(
        """SELECT call_id, action, tools, exit_code, response_hash, obs_hashes
                         FROM steps WHERE episode_id = ? AND step = ?""",
        [episode_id, step],
    ).fetchone()
    if row is None:
        return None
    call_id, action, tools, exit_code, rh, obs = row
    trs = con.execute(
        """SELECT name, arguments_hash, output_hash, exit_code FROM tool_results
                         WHERE call_id = ? ORDER BY seq""",
        [call_id],
    ).fetchall()
    hashes = [rh] + list(obs or []) + [h for t in trs for h in (t[1], t[2])]
    texts = iter_blob_texts(con, [h for h in hashes if h is not None])
    content, tool_calls = "", []
    if rh is not None and rh in texts:
        try:
            resp = json.loads(texts[rh])
            content = resp.get("content") or ""
            tool_calls = [
                (tc.get("name", ""), tc.get("arguments", "")) for tc in resp.get("tool_calls") or []
            ]
        except (json.JSONDecodeError, AttributeError):
            content = texts[rh]
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
        "response": content,
        "tool_calls": tool_calls,
        "results": results,
    }


def episode_deliveries(con: duckdb.DuckDBPyConnection, episode_id: str) -> pd.DataFrame:
    """Deliveries of an episode with their consuming step and span (when built)."""
    return _df(
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


def episode_entries(con: duckdb.DuckDBPyConnection, episode_id: str) -> pd.DataFrame:
    """Span entries of an episode with credit windows and the current verdict's assessment."""
    return _df(
        con,
        """
        SELECT se.span_id, se.pos, se.namespace, se.item_id, se.display_key, se.exposure,
               se.window_start, se.window_end, s.first_step, s.status, s.form, v.triage,
               a.relevance, a.accuracy, a.novelty, a.influence, a.effect, a.anchors, a.evidence,
               a.usage_label
        FROM span_entries se JOIN spans s USING (span_id)
             LEFT JOIN verdicts v USING (span_id)
             LEFT JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = se.pos
        WHERE se.episode_id = ? ORDER BY s.first_step NULLS LAST, se.span_id, se.pos""",
        [episode_id],
    )


def episode_spans(con: duckdb.DuckDBPyConnection, episode_id: str) -> pd.DataFrame:
    """Spans of an episode with status and triage."""
    return _df(
        con,
        """
        SELECT s.span_id, s.status, s.first_step, s.last_step, s.n_entries, s.restatements,
               s.est_tokens, s.form, s.route, s.reason, v.triage
        FROM spans s LEFT JOIN verdicts v USING (span_id)
        WHERE s.episode_id = ? ORDER BY s.first_step NULLS LAST, s.span_id""",
        [episode_id],
    )


# ---- Spans ----------------------------------------------------------------------------------


def span_row(con: duckdb.DuckDBPyConnection, span_id: str) -> dict[str, Any] | None:
    """The span's stored context row with its verdict (None when unknown)."""
    cur = con.execute(
        """
        SELECT s.*, v.judgment_id AS verdict_judgment, v.triage, v.profiled
        FROM spans s LEFT JOIN verdicts v USING (span_id) WHERE s.span_id = ?""",
        [span_id],
    )
    row = cur.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cur.description], row))


def span_entries(con: duckdb.DuckDBPyConnection, span_id: str) -> pd.DataFrame:
    """Entries of a span: exposure, window, exposed text and delivered value."""
    # Texts are joined in SQL: 64-bit hashes would lose precision in a float column.
    return _df(
        con,
        """
        SELECT se.pos, se.namespace, se.item_id, se.version, se.display_key, se.exposure,
               se.window_start, se.window_end, bx.text AS exposed_text,
               coalesce(bv.text, bd.text) AS value
        FROM span_entries se JOIN spans s USING (span_id)
             LEFT JOIN delivery_entries de ON de.delivery_id = s.first_delivery_id AND de.pos = se.pos
             LEFT JOIN blobs bx ON bx.hash = se.exposed_hash
             LEFT JOIN blobs bv ON bv.hash = se.value_hash
             LEFT JOIN blobs bd ON bd.hash = de.value_hash
        WHERE se.span_id = ? ORDER BY se.pos""",
        [span_id],
    )


def span_placements(con: duckdb.DuckDBPyConnection, span_id: str) -> pd.DataFrame:
    """Placements of the span's first (target) delivery with their text."""
    return _df(
        con,
        """
        SELECT p.pos, p.slot, p.kind, p.message_index, b.text, p.size
        FROM placements p JOIN spans s ON s.first_delivery_id = p.delivery_id
             LEFT JOIN blobs b ON b.hash = p.text_hash
        WHERE s.span_id = ? ORDER BY p.pos""",
        [span_id],
    )


def span_prior_sources(con: duckdb.DuckDBPyConnection, span_id: str) -> pd.DataFrame:
    """Prior-context sources B_S of a span ([P<pos>]) with their visible text."""
    return _df(
        con,
        """SELECT p.pos, p.kind, p.message_index, p.role, coalesce(b.text, '') AS text,
                              p.chars, p.cut
                       FROM prior_sources p LEFT JOIN blobs b ON b.hash = p.text_hash
                       WHERE p.span_id = ? ORDER BY p.pos""",
        [span_id],
    )


def span_judgments(con: duckdb.DuckDBPyConnection, span_id: str) -> pd.DataFrame:
    """Every judgment of a span, newest first (without transcripts)."""
    return _df(
        con,
        """
        SELECT j.judgment_id, j.judge, j.model, j.status, j.reason, j.calls, j.followups, j.forced,
               j.input_tokens, j.output_tokens, j.cost_usd, j.started_at, j.ended_at, j.summary,
               j.confidence, j.batch_id, (v.judgment_id IS NOT NULL) AS current
        FROM judgments j LEFT JOIN verdicts v ON v.judgment_id = j.judgment_id
        WHERE j.span_id = ? ORDER BY j.started_at DESC NULLS LAST, j.judgment_id DESC""",
        [span_id],
    )


def judgment_detail(con: duckdb.DuckDBPyConnection, judgment_id: str) -> dict[str, Any] | None:
    """One judgment with its transcript and validation attempts (parsed JSON)."""
    cur = con.execute("SELECT * FROM judgments WHERE judgment_id = ?", [judgment_id])
    row = cur.fetchone()
    if row is None:
        return None
    out = dict(zip([d[0] for d in cur.description], row))
    for k in ("transcript", "attempts", "settings"):
        if isinstance(out.get(k), str):
            try:
                out[k] = json.loads(out[k])
            except json.JSONDecodeError:
                pass
    return out


def judgment_assessments(con: duckdb.DuckDBPyConnection, judgment_id: str) -> pd.DataFrame:
    """The per-entry assessments of one judgment."""
    return _df(
        con,
        """
        SELECT pos, item_id, relevance, accuracy, novelty, influence, effect, anchors, evidence,
               usage_label, notes, window_read
        FROM assessments WHERE judgment_id = ? ORDER BY pos""",
        [judgment_id],
    )


def spans_in_scope(
    con: duckdb.DuckDBPyConnection,
    runs: list[str] | None = None,
    outcome: str | None = None,
    axis: str | None = None,
    form: str | None = None,
    limit: int = 500,
) -> pd.DataFrame:
    """Spans behind an Overview number: filter by outcome class, a nonzero profile axis or form.

    The outcome class is the verdict's triage label, else the span status (`unjudged` for an
    eligible span without a verdict).
    """
    where, params = _scope(runs, "run_id")
    if outcome:
        where += " AND outcome = ?"
        params.append(outcome)
    if axis:
        if axis not in _AXES:
            raise ValueError(f"unknown axis {axis!r}")
        where += f" AND {axis} > 0"
    if form:
        where += " AND form = ?"
        params.append(form)
    return _df(
        con,
        f"""
        SELECT * FROM (
          SELECT s.span_id, s.episode_id, r.config, e.run_id, s.status, s.form, s.first_step,
                 s.n_entries, s.est_tokens,
                 coalesce(v.triage, CASE WHEN s.status = 'eligible' THEN 'unjudged' ELSE s.status END)
                   AS outcome, v.relevance, v.corroboration, v.information_gain, v.acted_on,
                 v.benefit, v.harm
          FROM spans s JOIN episodes e USING (episode_id) LEFT JOIN runs r ON r.run_id = e.run_id
               LEFT JOIN verdicts v USING (span_id)) q
        WHERE {where}
        ORDER BY episode_id, first_step LIMIT {int(limit)}""",
        params,
    )


_AXES = ("relevance", "corroboration", "information_gain", "acted_on", "benefit", "harm")


def outcome_counts(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None) -> pd.DataFrame:
    """Span counts per configuration and outcome class, with estimated delivered tokens."""
    where, params = _scope(runs)
    return _df(
        con,
        f"""
        SELECT r.config,
               coalesce(v.triage, CASE WHEN s.status = 'eligible' THEN 'unjudged' ELSE s.status END)
                 AS outcome,
               count(*) AS spans, sum(s.est_tokens) AS est_tokens
        FROM spans s JOIN episodes e USING (episode_id) LEFT JOIN runs r ON r.run_id = e.run_id
             LEFT JOIN verdicts v USING (span_id)
        WHERE {where} GROUP BY ALL ORDER BY 1, 2""",
        params,
    )


def harmful_entries(
    con: duckdb.DuckDBPyConnection, runs: list[str] | None = None, limit: int = 200
) -> pd.DataFrame:
    """Entries whose current assessment has a harmed effect (for one-click drill-down)."""
    where, params = _scope(runs)
    return _df(
        con,
        f"""
        SELECT a.span_id, s.episode_id, r.config, se.namespace, se.item_id, se.display_key,
               a.pos, a.usage_label, a.notes
        FROM verdicts v JOIN assessments a ON a.judgment_id = v.judgment_id
             JOIN spans s ON s.span_id = v.span_id JOIN episodes e ON e.episode_id = s.episode_id
             LEFT JOIN runs r ON r.run_id = e.run_id
             LEFT JOIN span_entries se ON se.span_id = a.span_id AND se.pos = a.pos
        WHERE a.effect = 'harmed' AND {where}
        ORDER BY r.config, s.episode_id LIMIT {int(limit)}""",
        params,
    )


# ---- Memory items ---------------------------------------------------------------------------


def search_items(con: duckdb.DuckDBPyConnection, query: str = "", limit: int = 200) -> pd.DataFrame:
    """Delivered items matching `query` in their id, display key or namespace."""
    q = (query or "").lower()
    return _df(
        con,
        f"""
        SELECT namespace, item_id, any_value(display_key) AS display_key,
               count(DISTINCT episode_id) AS episodes, count(*) AS deliveries
        FROM delivery_entries
        WHERE item_id IS NOT NULL AND (? = '' OR contains(lower(item_id), ?)
              OR contains(lower(coalesce(display_key, '')), ?) OR contains(lower(namespace), ?))
        GROUP BY 1, 2 ORDER BY deliveries DESC, item_id LIMIT {int(limit)}""",
        [q, q, q, q],
    )


def item_deliveries(
    con: duckdb.DuckDBPyConnection, namespace: str, item_id: str, limit: int = 2000
) -> pd.DataFrame:
    """Deliveries of an item that start a span (or lie outside every span), with the span's
    restatement count, consuming step and current verdict. Restatements are counted, not listed:
    a host block resent at every step would otherwise list tens of thousands of rows."""
    return _df(
        con,
        f"""
        SELECT de.delivery_id, de.episode_id, r.config, e.run_id, de.version, d.form, d.route,
               coalesce(dc.consuming_step, st.step) AS step, dc.span_id, sp.restatements,
               v.triage, a.relevance, a.novelty, a.influence, a.effect, a.usage_label,
               CASE WHEN e.resolved THEN 'resolved' WHEN e.resolved = FALSE THEN 'failed'
                    ELSE 'unknown' END AS outcome
        FROM delivery_entries de JOIN deliveries d USING (delivery_id)
             JOIN episodes e ON e.episode_id = de.episode_id LEFT JOIN runs r ON r.run_id = e.run_id
             LEFT JOIN steps st ON st.call_id = d.consuming_call_id
             LEFT JOIN delivery_context dc ON dc.delivery_id = de.delivery_id
             LEFT JOIN spans sp ON sp.span_id = dc.span_id
             LEFT JOIN span_entries se ON se.span_id = dc.span_id AND se.namespace = de.namespace
                  AND se.item_id = de.item_id
             LEFT JOIN verdicts v ON v.span_id = dc.span_id
             LEFT JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = se.pos
        WHERE de.namespace = ? AND de.item_id = ? AND NOT coalesce(dc.restatement, FALSE)
        ORDER BY r.config, e.run_id, e.position, step LIMIT {int(limit)}""",
        [namespace, item_id],
    )


def item_counts(con: duckdb.DuckDBPyConnection, namespace: str, item_id: str) -> dict[str, int]:
    """Deliveries (restatements included), episodes, acted-on and harmed current assessments."""
    row = con.execute(
        """
        SELECT count(*), count(DISTINCT episode_id) FROM delivery_entries
        WHERE namespace = ? AND item_id = ?""",
        [namespace, item_id],
    ).fetchone()
    acted = con.execute(
        """
        SELECT count(*) FILTER (WHERE a.influence = 'acted_on'), count(*) FILTER (WHERE a.effect = 'harmed')
        FROM span_entries se JOIN verdicts v USING (span_id)
             JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = se.pos
        WHERE se.namespace = ? AND se.item_id = ?""",
        [namespace, item_id],
    ).fetchone()
    return {
        "deliveries": int(row[0]),  # type: ignore[index]
        "episodes": int(row[1]),  # type: ignore[index]
        "acted_on": int(acted[0] or 0),  # type: ignore[index]
        "harmed": int(acted[1] or 0),  # type: ignore[index]
    }


def item_history(con: duckdb.DuckDBPyConnection, namespace: str, item_id: str) -> pd.DataFrame:
    """Recorded changes of an item (create/update/delete) with their origin episode."""
    return _df(
        con,
        """
        SELECT i.version, i.op, i.episode_id, i.run_id, i.changed_at, b.text AS value,
               CASE WHEN e.resolved THEN 'resolved' WHEN e.resolved = FALSE THEN 'failed'
                    ELSE 'unknown' END AS origin_outcome
        FROM item_events i LEFT JOIN episodes e USING (episode_id) LEFT JOIN blobs b ON b.hash = i.value_hash
        WHERE i.namespace = ? AND i.item_id = ? ORDER BY i.file_id, i.seq""",
        [namespace, item_id],
    )


# ---- Judge runs -----------------------------------------------------------------------------


def judge_batches(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Judge batches with judgment counts, accepted/error counts, cost and follow-ups."""
    return _df(
        con,
        """
        SELECT coalesce(j.batch_id, '(single)') AS batch_id, any_value(b.judge) AS batch_judge,
               any_value(j.judge) AS judge, any_value(j.model) AS model, any_value(b.status) AS status,
               min(coalesce(b.started_at, j.started_at)) AS started_at,
               max(coalesce(b.ended_at, j.ended_at)) AS ended_at,
               count(*) AS judgments, count(*) FILTER (WHERE j.status = 'accepted') AS accepted,
               count(*) FILTER (WHERE j.status <> 'accepted') AS errors,
               sum(j.cost_usd) AS cost_usd, sum(j.input_tokens) AS input_tokens,
               sum(j.cached_tokens) AS cached_tokens, sum(j.output_tokens) AS output_tokens,
               sum(j.calls) AS calls, avg(j.followups) AS mean_followups,
               count(*) FILTER (WHERE j.forced) AS forced
        FROM judgments j LEFT JOIN judge_batches b USING (batch_id)
        GROUP BY 1 ORDER BY started_at DESC NULLS LAST""",
    )


def judge_errors(con: duckdb.DuckDBPyConnection, batch_id: str | None = None) -> pd.DataFrame:
    """Judgment errors by reason (optionally for one batch)."""
    return _df(
        con,
        """
        SELECT coalesce(reason, status) AS reason, count(*) AS judgments,
               any_value(span_id) AS example_span
        FROM judgments WHERE status <> 'accepted' AND (? IS NULL OR coalesce(batch_id, '(single)') = ?)
        GROUP BY 1 ORDER BY 2 DESC""",
        [batch_id, batch_id],
    )


def judge_followups(con: duckdb.DuckDBPyConnection, batch_id: str | None = None) -> pd.DataFrame:
    """Distribution of follow-up counts and forced answers per judgment status (A.6.8)."""
    return _df(
        con,
        """
        SELECT coalesce(followups, 0) AS followups, status, count(*) AS judgments,
               count(*) FILTER (WHERE forced) AS forced
        FROM judgments WHERE (? IS NULL OR coalesce(batch_id, '(single)') = ?)
        GROUP BY ALL ORDER BY 1, 2""",
        [batch_id, batch_id],
    )


def judge_cost(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None) -> pd.DataFrame:
    """Judge cost and tokens per configuration and judge kind."""
    where, params = _scope(runs)
    return _df(
        con,
        f"""
        SELECT r.config, j.judge, count(*) AS judgments, sum(j.cost_usd) AS cost_usd,
               sum(j.input_tokens) AS input_tokens, sum(j.output_tokens) AS output_tokens
        FROM judgments j JOIN spans s USING (span_id) JOIN episodes e ON e.episode_id = s.episode_id
             LEFT JOIN runs r ON r.run_id = e.run_id
        WHERE {where} GROUP BY ALL ORDER BY 1, 2""",
        params,
    )


# ---- MemTrim --------------------------------------------------------------------------------


def trim_deliveries(
    con: duckdb.DuckDBPyConnection, runs: list[str] | None = None, limit: int = 2000
) -> pd.DataFrame:
    """Deliveries with a MemTrim result: units per class and characters before/after."""
    where, params = _scope(runs)
    return _df(
        con,
        f"""
        SELECT t.delivery_id, t.episode_id, r.config, count(*) AS entries,
               sum(t.shared) AS shared, sum(t.conflicting) AS conflicting,
               sum(t.memory_only) AS memory_only, sum(t.chars_before) AS chars_before,
               sum(t.chars_after) AS chars_after
        FROM trim_results t JOIN episodes e USING (episode_id) LEFT JOIN runs r ON r.run_id = e.run_id
        WHERE {where} GROUP BY ALL ORDER BY t.episode_id, t.delivery_id LIMIT {int(limit)}""",
        params,
    )


def trim_results_for(con: duckdb.DuckDBPyConnection, delivery_id: str) -> pd.DataFrame:
    """Per-entry MemTrim results of one delivery."""
    return _df(
        con,
        """SELECT pos, shared, conflicting, memory_only, outcome, chars_before,
                              chars_after, decision
                       FROM trim_results WHERE delivery_id = ? ORDER BY pos""",
        [delivery_id],
    )


def delivery_span(con: duckdb.DuckDBPyConnection, delivery_id: str) -> str | None:
    """The span a delivery belongs to (None before the context build)."""
    row = con.execute("SELECT span_id FROM delivery_context WHERE delivery_id = ?", [delivery_id]).fetchone()
    return row[0] if row else None


# ---- Annotations and case studies -----------------------------------------------------------


def list_annotations(
    con: duckdb.DuckDBPyConnection,
    case_study_id: str | None = None,
    target_kind: str | None = None,
    target_id: str | None = None,
) -> pd.DataFrame:
    """Annotations, newest first, optionally of one case study or one target."""
    return _df(
        con,
        """
        SELECT annotation_id, target_kind, target_id, episode_id, note, tags, labels, author,
               case_study_id, created_at
        FROM annotations
        WHERE (? IS NULL OR case_study_id = ?) AND (? IS NULL OR target_kind = ?)
              AND (? IS NULL OR target_id = ?)
        ORDER BY created_at DESC, annotation_id""",
        [case_study_id, case_study_id, target_kind, target_kind, target_id, target_id],
    )


def list_case_studies(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Case studies with their annotation counts."""
    return _df(
        con,
        """
        SELECT c.case_study_id, c.name, c.description, c.created_at, count(a.annotation_id) AS annotations
        FROM case_studies c LEFT JOIN annotations a USING (case_study_id)
        GROUP BY ALL ORDER BY c.created_at DESC""",
    )


def upsert_annotation(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    """Insert or replace one annotation (keys as the annotations table's columns)."""
    con.execute(
        """INSERT OR REPLACE INTO annotations
                   (annotation_id, target_kind, target_id, episode_id, note, tags, labels, author,
                    case_study_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [
            row["annotation_id"],
            row["target_kind"],
            row["target_id"],
            row.get("episode_id"),
            row.get("note", ""),
            list(row.get("tags") or []),
            json.dumps(row.get("labels") or {}),
            row.get("author"),
            row.get("case_study_id"),
            row["created_at"],
        ],
    )


def delete_annotation(con: duckdb.DuckDBPyConnection, annotation_id: str) -> None:
    """Remove one annotation."""
    con.execute("DELETE FROM annotations WHERE annotation_id = ?", [annotation_id])


def upsert_case_study(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    """Insert or replace a case study's name and description."""
    con.execute(
        """INSERT OR REPLACE INTO case_studies (case_study_id, name, description, created_at)
                   VALUES (?, ?, ?, ?)""",
        [row["case_study_id"], row["name"], row.get("description", ""), row["created_at"]],
    )


def assign_annotations(
    con: duckdb.DuckDBPyConnection, annotation_ids: list[str], case_study_id: str | None
) -> None:
    """Collect annotations into a case study (None removes them from any)."""
    con.execute(
        """UPDATE annotations SET case_study_id = ?
                   WHERE annotation_id IN (SELECT unnest(?::VARCHAR[]))""",
        [case_study_id, list(annotation_ids)],
    )


def judge_labels_for(con: duckdb.DuckDBPyConnection, targets: list[tuple[str, int]]) -> pd.DataFrame:
    """Current judge assessments for (span_id, entry pos) pairs, for human-vs-judge agreement."""
    if not targets:
        return pd.DataFrame(
            columns=["span_id", "pos", "relevance", "accuracy", "novelty", "influence", "effect"]
        )
    con.register("_targets", pd.DataFrame(targets, columns=["span_id", "pos"]))
    try:
        return _df(
            con,
            """
            SELECT t.span_id, t.pos, a.relevance, a.accuracy, a.novelty, a.influence, a.effect
            FROM _targets t JOIN verdicts v ON v.span_id = t.span_id
                 JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = t.pos""",
        )
    finally:
        con.unregister("_targets")


# ---- Compare --------------------------------------------------------------------------------


def paired_outcomes(con: duckdb.DuckDBPyConnection, runs_a: list[str], runs_b: list[str]) -> pd.DataFrame:
    """Per-task outcomes of two scopes side by side, with whether any entry was acted on.

    A task is `gained` when B resolves it more often than A, `lost` when less often (MemUse 4.3).
    """
    return _df(
        con,
        """
        WITH acted AS (
            SELECT s.episode_id, bool_or(a.influence = 'acted_on') AS acted,
                   bool_or(a.effect = 'improved') AS beneficial, bool_or(a.effect = 'harmed') AS harmful
            FROM spans s JOIN verdicts v USING (span_id)
                 JOIN assessments a ON a.judgment_id = v.judgment_id GROUP BY 1),
        side AS (
            SELECT e.task_id, CASE WHEN e.run_id IN (SELECT unnest(?::VARCHAR[])) THEN 'a' ELSE 'b' END AS side,
                   e.episode_id, e.resolved, coalesce(acted.acted, FALSE) AS acted,
                   coalesce(acted.beneficial, FALSE) AS beneficial,
                   coalesce(acted.harmful, FALSE) AS harmful
            FROM episodes e LEFT JOIN acted USING (episode_id)
            WHERE e.run_id IN (SELECT unnest(?::VARCHAR[])) OR e.run_id IN (SELECT unnest(?::VARCHAR[])))
        SELECT task_id,
               avg(CASE WHEN resolved THEN 1.0 ELSE 0.0 END) FILTER (WHERE side = 'a') AS resolved_a,
               avg(CASE WHEN resolved THEN 1.0 ELSE 0.0 END) FILTER (WHERE side = 'b') AS resolved_b,
               bool_or(acted) FILTER (WHERE side = 'a') AS acted_a,
               bool_or(acted) FILTER (WHERE side = 'b') AS acted_b,
               bool_or(beneficial) FILTER (WHERE side = 'b') AS beneficial_b,
               bool_or(harmful) FILTER (WHERE side = 'b') AS harmful_b,
               min(episode_id) FILTER (WHERE side = 'a') AS episode_a,
               min(episode_id) FILTER (WHERE side = 'b') AS episode_b
        FROM side GROUP BY task_id
        HAVING count(*) FILTER (WHERE side = 'a') > 0 AND count(*) FILTER (WHERE side = 'b') > 0
        ORDER BY task_id""",
        [list(runs_a), list(runs_a), list(runs_b)],
    )


def form_volume(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None) -> pd.DataFrame:
    """Estimated delivered tokens and beneficial entries per delivery form (Figure 5 inputs)."""
    where, params = _scope(runs)
    return _df(
        con,
        f"""
        WITH ben AS (SELECT a.span_id, count(*) FILTER (WHERE a.effect = 'improved') AS beneficial
                     FROM verdicts v JOIN assessments a ON a.judgment_id = v.judgment_id GROUP BY 1)
        SELECT coalesce(s.form, '(unknown)') AS form, count(*) AS spans,
               sum(s.est_tokens) AS est_tokens, coalesce(sum(ben.beneficial), 0) AS beneficial
        FROM spans s JOIN episodes e USING (episode_id) LEFT JOIN ben USING (span_id)
        WHERE {where} GROUP BY 1 ORDER BY 1""",
        params,
    )
