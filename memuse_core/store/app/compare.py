"""Paired per-task outcomes of two scopes (MemUse 4.3): resolve rates side by side and whether any
entry was acted on, beneficial or harmful in them."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from ..judging import resolve_judge, verdicts_of
from ._sql import frame


def paired_outcomes(
    con: duckdb.DuckDBPyConnection, runs_a: Sequence[str], runs_b: Sequence[str], judge: str | None = None
) -> pd.DataFrame:
    """One row per task attempted on both sides: each side's resolve rate over its episodes with an
    outcome (NULL when none has one: unknown, not unresolved), whether an entry was acted on (A and
    B), beneficial or harmful (B) by `judge`'s verdicts (default `resolve_judge`; one judge for both
    sides), and one episode of each side."""
    judge = resolve_judge(con, judge)
    return frame(
        con,
        f"""
        WITH acted AS (
            SELECT s.episode_id, bool_or(a.influence = 'acted_on') AS acted,
                   bool_or(a.effect = 'improved') AS beneficial, bool_or(a.effect = 'harmed') AS harmful
            FROM spans s JOIN verdicts v ON {verdicts_of(judge)}
                 JOIN assessments a ON a.judgment_id = v.judgment_id GROUP BY 1),
        side AS (
            SELECT e.task_id, CASE WHEN e.run_id IN (SELECT unnest(?::VARCHAR[])) THEN 'a' ELSE 'b' END AS side,
                   e.episode_id, e.resolved, coalesce(acted.acted, FALSE) AS acted,
                   coalesce(acted.beneficial, FALSE) AS beneficial,
                   coalesce(acted.harmful, FALSE) AS harmful
            FROM episodes e LEFT JOIN acted USING (episode_id)
            WHERE e.run_id IN (SELECT unnest(?::VARCHAR[])) OR e.run_id IN (SELECT unnest(?::VARCHAR[])))
        SELECT task_id,
               avg(CAST(resolved AS DOUBLE)) FILTER (WHERE side = 'a') AS resolved_a,
               avg(CAST(resolved AS DOUBLE)) FILTER (WHERE side = 'b') AS resolved_b,
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


def group_tasks(con: duckdb.DuckDBPyConnection, level: str) -> dict[str, set[str]]:
    """The task ids each configuration (`level` "config") or run ("run") attempted."""
    col = "coalesce(r.config, r.run_id)" if level == "config" else "e.run_id"
    rows = con.execute(
        f"SELECT DISTINCT {col} AS g, e.task_id FROM episodes e JOIN runs r USING (run_id) "
        "WHERE e.task_id IS NOT NULL"
    ).fetchall()
    out: dict[str, set[str]] = {}
    for g, t in rows:
        out.setdefault(str(g), set()).add(str(t))
    return out
