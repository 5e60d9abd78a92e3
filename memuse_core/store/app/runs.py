"""Runs of the store with their configuration, for the sidebar scope and the Compare page."""

from __future__ import annotations

import duckdb
import pandas as pd

from ._sql import frame


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
