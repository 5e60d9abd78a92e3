"""Queries of the memory graph (MemUse 3.6, A.4.3): items, their recorded writes and their uses."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from ..judging import resolve_judge
from .blocks import _q, _with

# ---- Memory graph (A.4.3): item histories, deliveries, spans and verdicts ----------------------
_KEYS = (
    """keys AS (SELECT DISTINCT unnest($ns::VARCHAR[]) AS namespace, unnest($ids::VARCHAR[]) AS item_id)"""
)


def lineage_items(
    con: duckdb.DuckDBPyConnection,
    *,
    item_id: str | None = None,
    namespace: str | None = None,
    episode_id: str | None = None,
    effect: str | None = None,
    runs: Sequence[str] | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """The (namespace, item_id) pairs of a graph: one item (any namespace when `namespace` is
    None), the items delivered in or written by one episode, or the items with a judged entry of
    `effect` in {harmful, beneficial, acted_on} in the selected runs."""
    if item_id is not None:
        sql = """SELECT DISTINCT namespace, item_id FROM (
            SELECT namespace, item_id FROM item_events UNION ALL
            SELECT namespace, item_id FROM delivery_entries)
        WHERE item_id = $item AND ($ns::VARCHAR IS NULL OR namespace = $ns::VARCHAR)
        ORDER BY ALL"""
        return con.execute(sql, {"item": item_id, "ns": namespace}).df()
    if episode_id is not None:
        sql = """SELECT DISTINCT namespace, item_id FROM (
            SELECT namespace, item_id FROM delivery_entries WHERE episode_id = $ep UNION ALL
            SELECT namespace, item_id FROM item_events WHERE episode_id = $ep)
        ORDER BY ALL"""
        return con.execute(sql, {"ep": episode_id}).df()
    cond = {
        "harmful": "influence = 'acted_on' AND effect = 'harmed'",
        "beneficial": "influence = 'acted_on' AND effect = 'improved'",
        "acted_on": "influence = 'acted_on'",
    }.get(effect or "")
    if cond is None:
        raise ValueError(f"effect must be harmful, beneficial or acted_on, not {effect!r}")
    sql = f"""{_with(None, "judged")}
    SELECT DISTINCT namespace, item_id FROM judged WHERE {cond} ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


def _key_params(keys: pd.DataFrame, runs: Sequence[str] | None) -> dict[str, object]:
    return {
        "ns": [str(x) for x in keys.namespace],
        "ids": [str(x) for x in keys.item_id],
        "runs": list(runs) if runs is not None else None,
    }


def lineage_events(
    con: duckdb.DuckDBPyConnection, keys: pd.DataFrame, runs: Sequence[str] | None = None
) -> pd.DataFrame:
    """Recorded writes (create/update/delete) of the given items in recorded order, with their
    origin episode when it is in the store (`origin_known`). Writes of runs outside the selection
    are left out; writes without a run (shared corpora) are kept."""
    sql = f"""{_with(None, "sel_eps")}, {_KEYS}
    SELECT ie.namespace, ie.item_id, ie.version, ie.op, ie.episode_id, ie.run_id, ie.changed_at,
           ie.file_id, ie.seq, e.run_id AS origin_run, e.task_id AS origin_task,
           e.position AS origin_position, e.repo AS origin_repo, e.resolved AS origin_resolved,
           e.episode_id IS NOT NULL AS origin_known
    FROM item_events ie JOIN keys USING (namespace, item_id)
    LEFT JOIN episodes e ON e.episode_id = ie.episode_id
    WHERE ie.run_id IS NULL OR $runs::VARCHAR[] IS NULL OR list_contains($runs::VARCHAR[], ie.run_id)
    ORDER BY ie.namespace, ie.item_id, ie.file_id, ie.seq"""
    return con.execute(sql, _key_params(keys, runs)).df()


def lineage_uses(
    con: duckdb.DuckDBPyConnection,
    keys: pd.DataFrame,
    runs: Sequence[str] | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """Every span entry of the given items in the selected runs: its span (outcome class, first
    step, form, route, deliveries), episode (task, position, outcome) and, when judged, the entry's
    accepted assessment and usage label, as `judge`'s verdicts (default `resolve_judge`) see it."""
    sql = f"""{_with(None, "span_cls")}, {_KEYS}
    SELECT se.namespace, se.item_id, se.version, se.exposure, se.pos, sc.span_id, sc.episode_id,
           sc.run_id, sc.config, ep.task_id, ep.position, ep.repo, ep.resolved, sc.status, sc.triage,
           sc.profiled, sc.first_step, sc.first_delivery_id, sp.n_deliveries, sc.form, sc.route,
           sc.est_tokens, a.relevance, a.accuracy, a.novelty, a.influence, a.effect, a.usage_label
    FROM span_entries se JOIN keys USING (namespace, item_id)
    JOIN span_cls sc ON sc.span_id = se.span_id
    JOIN spans sp ON sp.span_id = se.span_id
    JOIN episodes ep ON ep.episode_id = sc.episode_id
    LEFT JOIN assessments a ON a.judgment_id = sc.judgment_id AND a.span_id = sc.span_id
         AND a.pos = se.pos
    ORDER BY se.namespace, se.item_id, sc.run_id, ep.position, sc.first_step, sc.span_id"""
    return con.execute(sql, {**_key_params(keys, runs), "judge": resolve_judge(con, judge)}).df()
