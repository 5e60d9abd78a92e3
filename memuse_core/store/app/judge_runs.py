"""Judge-run queries of the app (MemUse A.6.8): batches with counts and cost, errors by reason,
follow-up and forced-answer counts, and judge cost per configuration."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from ._sql import frame, scope

SINGLE = "(single)"
"""Batch id shown for judgments made one at a time (the app's re-judge button)."""


def judge_batches(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Judge batches, newest first, with judgment, accepted and error counts, tokens, cost and
    follow-ups."""
    return frame(
        con,
        f"""
        SELECT coalesce(j.batch_id, '{SINGLE}') AS batch_id, any_value(b.judge) AS batch_judge,
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
    """Judgments without an accepted answer, by reason (optionally of one batch)."""
    return frame(
        con,
        f"""
        SELECT coalesce(reason, status) AS reason, count(*) AS judgments,
               any_value(span_id) AS example_span
        FROM judgments
        WHERE status <> 'accepted' AND (? IS NULL OR coalesce(batch_id, '{SINGLE}') = ?)
        GROUP BY 1 ORDER BY 2 DESC, 1""",
        [batch_id, batch_id],
    )


def judge_followups(con: duckdb.DuckDBPyConnection, batch_id: str | None = None) -> pd.DataFrame:
    """Judgments per follow-up count and status, with forced answers (A.6.8)."""
    return frame(
        con,
        f"""
        SELECT coalesce(followups, 0) AS followups, status, count(*) AS judgments,
               count(*) FILTER (WHERE forced) AS forced
        FROM judgments WHERE (? IS NULL OR coalesce(batch_id, '{SINGLE}') = ?)
        GROUP BY ALL ORDER BY 1, 2""",
        [batch_id, batch_id],
    )


def judge_cost(con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Judge cost and tokens per configuration and judge kind."""
    where, params = scope(runs)
    return frame(
        con,
        f"""
        SELECT r.config, j.judge, count(*) AS judgments, sum(j.cost_usd) AS cost_usd,
               sum(j.input_tokens) AS input_tokens, sum(j.output_tokens) AS output_tokens
        FROM judgments j JOIN spans s USING (span_id) JOIN episodes e ON e.episode_id = s.episode_id
             LEFT JOIN runs r ON r.run_id = e.run_id
        WHERE {where} GROUP BY ALL ORDER BY 1, 2""",
        params,
    )
