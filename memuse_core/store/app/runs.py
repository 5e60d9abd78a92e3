"""Runs of the store with their configuration, for the sidebar scope and the Compare page."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from ._sql import frame, scope


def list_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Runs with their configuration, label, agent, model, episode count and resolve rate."""
    return frame(
        con,
        """
        SELECT r.run_id, coalesce(r.config, '(none)') AS config, r.label, r.agent, r.model,
               count(e.episode_id) AS episodes,
               avg(CASE WHEN e.resolved THEN 1.0 WHEN e.resolved = FALSE THEN 0.0 END) AS resolve_rate
        FROM runs r LEFT JOIN episodes e USING (run_id)
        GROUP BY ALL ORDER BY config, r.run_id""",
    )


def memory_states(con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Per run in scope: its configuration, episodes, episodes that received memory (at least one
    recorded delivery) and those of them whose evaluation context is not built yet (no
    `context_built` row: imported without a build, or not reached by an interrupted one)."""
    where, params = scope(runs)
    return frame(
        con,
        f"""
        SELECT coalesce(r.config, e.run_id) AS config, e.run_id, count(*) AS episodes,
               count(*) FILTER (WHERE d.episode_id IS NOT NULL) AS delivered,
               count(*) FILTER (WHERE d.episode_id IS NOT NULL AND cb.episode_id IS NULL) AS not_built
        FROM episodes e LEFT JOIN runs r USING (run_id)
             LEFT JOIN (SELECT DISTINCT episode_id FROM deliveries) d USING (episode_id)
             LEFT JOIN context_built cb USING (episode_id)
        WHERE {where}
        GROUP BY ALL ORDER BY 1, 2""",
        params,
    )
