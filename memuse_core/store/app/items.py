"""Memory-item queries of the app (MemUse A.4.3): item search, every span-starting delivery of an
item with its span's outcome class and the entry's assessment, counts, and recorded history."""

from __future__ import annotations

import duckdb
import pandas as pd

from ...vocab import EFFECT, INFLUENCE
from ..judging import resolve_judge, verdicts_of
from ._sql import episode_outcome, frame
from .outcomes import spans_with_outcome

ACTED_ON = INFLUENCE[0]


def search_items(
    con: duckdb.DuckDBPyConnection, query: str = "", limit: int = 200, judge: str | None = None
) -> pd.DataFrame:
    """Delivered items matching `query` in their id, display key or namespace, with the entries of
    one judge's current verdicts (default `resolve_judge`) that were acted on and harmed or
    improved the episode (3.4): items with harmful use first, then beneficial use, then the most
    delivered."""
    q = (query or "").lower()
    judge = resolve_judge(con, judge)
    improved, _, harmed = EFFECT
    return frame(
        con,
        f"""
        WITH d AS (
            SELECT namespace, item_id, any_value(display_key) AS display_key,
                   count(DISTINCT episode_id) AS episodes, count(*) AS deliveries
            FROM delivery_entries
            WHERE item_id IS NOT NULL AND (? = '' OR contains(lower(item_id), ?)
                  OR contains(lower(coalesce(display_key, '')), ?) OR contains(lower(namespace), ?))
            GROUP BY 1, 2),
        u AS (
            SELECT se.namespace, se.item_id, count(*) FILTER (WHERE a.effect = ?) AS harmed,
                   count(*) FILTER (WHERE a.effect = ?) AS improved
            FROM span_entries se JOIN spans s USING (span_id) JOIN verdicts v ON {verdicts_of(judge)}
                 JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = se.pos
            WHERE a.influence = ? GROUP BY 1, 2)
        SELECT d.*, coalesce(u.harmed, 0) AS harmed, coalesce(u.improved, 0) AS improved
        FROM d LEFT JOIN u USING (namespace, item_id)
        ORDER BY harmed DESC, improved DESC, deliveries DESC, item_id LIMIT {int(limit)}""",
        [q, q, q, q, harmed, improved, ACTED_ON],
    )


def item_deliveries(
    con: duckdb.DuckDBPyConnection, namespace: str, item_id: str, limit: int = 2000, judge: str | None = None
) -> pd.DataFrame:
    """Deliveries of an item that start a span (or lie outside every span), with the span's
    restatement count, consuming step, outcome class and the entry's current assessment, all as
    one judge's verdicts see them (default `resolve_judge`).

    Restatements are counted, not listed: a host block resent at every step would otherwise list
    tens of thousands of rows."""
    eps = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT episode_id FROM delivery_entries WHERE namespace = ? AND item_id = ?",
            [namespace, item_id],
        ).fetchall()
    ]
    judge = resolve_judge(con, judge)
    with spans_with_outcome(con, episode_ids=eps, judge=judge) as rel:
        return frame(
            con,
            f"""
            SELECT de.delivery_id, de.episode_id, r.config, e.run_id, de.version, d.form, d.route,
                   coalesce(dc.consuming_step, st.step) AS step, dc.span_id, sp.restatements,
                   o.outcome, a.relevance, a.novelty, a.influence, a.effect, a.usage_label,
                   {episode_outcome()} AS episode_outcome
            FROM delivery_entries de JOIN deliveries d USING (delivery_id)
                 JOIN episodes e ON e.episode_id = de.episode_id LEFT JOIN runs r ON r.run_id = e.run_id
                 LEFT JOIN steps st ON st.call_id = d.consuming_call_id
                 LEFT JOIN delivery_context dc ON dc.delivery_id = de.delivery_id
                 LEFT JOIN spans sp ON sp.span_id = dc.span_id
                 LEFT JOIN {rel} o ON o.span_id = dc.span_id
                 LEFT JOIN span_entries se ON se.span_id = dc.span_id AND se.namespace = de.namespace
                      AND se.item_id = de.item_id
                 LEFT JOIN verdicts v ON {verdicts_of(judge, "sp")}
                 LEFT JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = se.pos
            WHERE de.namespace = ? AND de.item_id = ? AND NOT coalesce(dc.restatement, FALSE)
            ORDER BY r.config, e.run_id, e.position, step LIMIT {int(limit)}""",
            [namespace, item_id],
        )


def item_counts(
    con: duckdb.DuckDBPyConnection, namespace: str, item_id: str, judge: str | None = None
) -> dict[str, int]:
    """Deliveries (restatements included), episodes, and entries of one judge's current verdicts
    (default `resolve_judge`) that were acted on or harmed."""
    row = con.execute(
        """
        SELECT count(*), count(DISTINCT episode_id) FROM delivery_entries
        WHERE namespace = ? AND item_id = ?""",
        [namespace, item_id],
    ).fetchone()
    acted = con.execute(
        f"""
        SELECT count(*) FILTER (WHERE a.influence = 'acted_on'), count(*) FILTER (WHERE a.effect = 'harmed')
        FROM span_entries se JOIN spans s USING (span_id) JOIN verdicts v ON {verdicts_of(resolve_judge(con, judge))}
             JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = se.pos
        WHERE se.namespace = ? AND se.item_id = ?""",
        [namespace, item_id],
    ).fetchone()
    deliveries, episodes = row if row is not None else (0, 0)
    acted_on, harmed = acted if acted is not None else (0, 0)
    return {
        "deliveries": int(deliveries or 0),
        "episodes": int(episodes or 0),
        "acted_on": int(acted_on or 0),
        "harmed": int(harmed or 0),
    }


def item_history(con: duckdb.DuckDBPyConnection, namespace: str, item_id: str) -> pd.DataFrame:
    """Recorded changes of an item (create/update/delete) with their origin episode and its outcome."""
    return frame(
        con,
        f"""
        SELECT i.version, i.op, i.episode_id, i.run_id, i.changed_at, b.text AS value,
               {episode_outcome()} AS origin_outcome
        FROM item_events i LEFT JOIN episodes e USING (episode_id) LEFT JOIN blobs b ON b.hash = i.value_hash
        WHERE i.namespace = ? AND i.item_id = ? ORDER BY i.file_id, i.seq""",
        [namespace, item_id],
    )
