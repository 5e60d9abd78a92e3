"""SQL of the app's MemTrim page: the corpus views over `trim_results` (MemTrim 3.3 on recorded
deliveries; the RQ2 overlap view of Section 2) and the delivery picker.

- `trim_summary(con)`: per configuration, characters and estimated tokens (vocab.estimate_tokens)
  MemTrim would save, unit counts and outcomes;
- `novelty_agreement(con)`: MemTrim's entry class against the judge's novelty label of the same
  entry, with agreement of "MemTrim redundant" vs "judge redundant" (empty when nothing is judged);
- `overlap_by_usage(con)`: query-memory content-word Jaccard (stored answer excluded) per entry
  with its usage label, in long form by group (used, unused, beneficial, harmful);
- `trim_episode_choices`, `trim_delivery_choices`: what the page's pickers list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ..vocab import CHARS_PER_TOKEN, EFFECT, INFLUENCE, JUDGE_KINDS, NOVELTY, TRIM_CLASSES
from .judging import resolve_judge
from .trim import TRIM_COLUMNS, _has

MT_REDUNDANT = TRIM_CLASSES[0]
"""MemTrim's `redundant` class: every unit of the entry is in the prior context."""
JUDGE_REDUNDANT = NOVELTY[2]
"""The judge's `redundant` novelty label (MemUse Table 4)."""
ACTED_ON, NO_INFLUENCE = INFLUENCE[0], INFLUENCE[3]
IMPROVED, HARMED = EFFECT[0], EFFECT[2]


def trim_episode_choices(con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None) -> list[str]:
    """Episodes in scope that have deliveries, in run order."""
    where, params = (
        ("TRUE", []) if runs is None else ("e.run_id IN (SELECT unnest(?::VARCHAR[]))", [list(runs)])
    )
    return [
        r[0]
        for r in con.execute(
            f"""SELECT e.episode_id FROM episodes e WHERE {where}
                AND e.episode_id IN (SELECT DISTINCT episode_id FROM deliveries)
                ORDER BY e.run_id, e.position, e.episode_id""",
            params,
        ).fetchall()
    ]


def episode_has_deliveries(con: duckdb.DuckDBPyConnection, episode_id: str) -> bool:
    """Whether the episode exists and has at least one delivery."""
    row = con.execute("SELECT count(*) FROM deliveries WHERE episode_id = ?", [episode_id]).fetchone()
    return bool(row and row[0])


def trim_delivery_choices(
    con: duckdb.DuckDBPyConnection, episode_id: str
) -> list[tuple[str, int | None, str | None, int]]:
    """(delivery id, consuming step or None, form, entry count) of an episode; the step is None
    for a delivery that was never consumed (a recorded run may end before it)."""
    rows = con.execute(
        """
        SELECT d.delivery_id, st.step, d.form, coalesce(d.n_entries, 0)
        FROM deliveries d LEFT JOIN steps st ON st.call_id = d.consuming_call_id
        WHERE d.episode_id = ? ORDER BY st.step NULLS LAST, d.seq""",
        [episode_id],
    ).fetchall()
    return [(r[0], None if r[1] is None else int(r[1]), r[2], int(r[3])) for r in rows]


def trim_summary(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Per configuration: deliveries, entries, unit counts, characters before/after, estimated
    tokens saved and the share saved (empty before `memuse trim`)."""
    cols = [
        "config",
        "deliveries",
        "entries",
        "shared",
        "conflicting",
        "memory_only",
        "chars_before",
        "chars_after",
        "chars_saved",
        "tokens_saved",
        "saved_share",
        "redundant_entries",
    ]
    if not _has(con, "trim_results"):
        return pd.DataFrame(columns=cols)
    return con.execute(f"""
        SELECT coalesce(r.config, '(none)') AS config, count(DISTINCT t.delivery_id) AS deliveries,
               count(*) AS entries, sum(t.shared) AS shared, sum(t.conflicting) AS conflicting,
               sum(t.memory_only) AS memory_only, sum(t.chars_before) AS chars_before,
               sum(t.chars_after) AS chars_after, sum(t.chars_before) - sum(t.chars_after) AS chars_saved,
               (sum(t.chars_before) - sum(t.chars_after)) // {CHARS_PER_TOKEN} AS tokens_saved,
               CASE WHEN sum(t.chars_before) > 0
                    THEN (sum(t.chars_before) - sum(t.chars_after)) / sum(t.chars_before) END AS saved_share,
               count(*) FILTER (WHERE t.memtrim_class = '{MT_REDUNDANT}') AS redundant_entries
        FROM trim_results t JOIN episodes e USING (episode_id) LEFT JOIN runs r ON r.run_id = e.run_id
        GROUP BY 1 ORDER BY 1""").df()


def _judged_entries_sql(judge: str) -> str:
    """trim_results rows of span first deliveries joined with the assessment of one judge's current
    verdict (verdicts are kept per judge; a table shows one)."""
    if judge not in JUDGE_KINDS:
        raise ValueError(f"unknown judge {judge!r}")
    return f"""
        SELECT t.delivery_id, t.pos, t.episode_id, t.memtrim_class, t.jaccard, a.novelty, a.influence,
               a.effect, a.usage_label, coalesce(r.config, '(none)') AS config
        FROM trim_results t
             JOIN spans s ON s.first_delivery_id = t.delivery_id
             JOIN verdicts v ON v.span_id = s.span_id AND v.judge = '{judge}'
             JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = t.pos
             JOIN episodes e ON e.episode_id = t.episode_id LEFT JOIN runs r ON r.run_id = e.run_id"""


def novelty_agreement(con: duckdb.DuckDBPyConnection, judge: str | None = None) -> dict[str, Any]:
    """Cross-table of MemTrim class vs judge novelty, and agreement on "redundant".

    Returns {"table": DataFrame(memtrim_class, novelty, n), "n": judged entries,
    "agreement": share of entries where (MemTrim redundant) == (judge redundant),
    "precision"/"recall": of MemTrim redundant against judge redundant} (None values when empty)."""
    empty = {
        "table": pd.DataFrame(columns=["memtrim_class", "novelty", "n"]),
        "n": 0,
        "agreement": None,
        "precision": None,
        "recall": None,
    }
    if not all(_has(con, t) for t in ("trim_results", "spans", "verdicts", "assessments")):
        return empty
    sql = _judged_entries_sql(resolve_judge(con, judge))
    df = con.execute(f"SELECT * FROM ({sql}) WHERE novelty IS NOT NULL").df()
    if df.empty:
        return empty
    table = (
        df.groupby(["memtrim_class", "novelty"])
        .size()
        .reset_index(name="n")
        .sort_values(["memtrim_class", "novelty"])
        .reset_index(drop=True)
    )
    mt = df["memtrim_class"] == MT_REDUNDANT
    jr = df["novelty"] == JUDGE_REDUNDANT
    tp = int((mt & jr).sum())
    return {
        "table": table,
        "n": int(len(df)),
        "agreement": float((mt == jr).mean()),
        "precision": tp / int(mt.sum()) if int(mt.sum()) else None,
        "recall": tp / int(jr.sum()) if int(jr.sum()) else None,
    }


def overlap_by_usage(con: duckdb.DuckDBPyConnection, judge: str | None = None) -> pd.DataFrame:
    """Query-memory overlap per judged entry in long form: columns group (used / unused /
    beneficial / harmful), jaccard, usage_label, config, delivery_id, pos. An entry counts as
    used when acted on, unused when its influence is none, beneficial when the effect improved,
    harmful when it harmed (Section 2 RQ2 applied to recorded deliveries)."""
    cols = ["group", "jaccard", "usage_label", "config", "delivery_id", "pos"]
    if not all(_has(con, t) for t in ("trim_results", "spans", "verdicts", "assessments")):
        return pd.DataFrame(columns=cols)
    return con.execute(
        f"""
        WITH j AS ({_judged_entries_sql(resolve_judge(con, judge))})
        SELECT 'used' AS "group", jaccard, usage_label, config, delivery_id, pos FROM j WHERE influence = ?
        UNION ALL SELECT 'unused', jaccard, usage_label, config, delivery_id, pos FROM j WHERE influence = ?
        UNION ALL SELECT 'beneficial', jaccard, usage_label, config, delivery_id, pos FROM j WHERE effect = ?
        UNION ALL SELECT 'harmful', jaccard, usage_label, config, delivery_id, pos FROM j WHERE effect = ?
        ORDER BY 1, 4, 5, 6""",
        [ACTED_ON, NO_INFLUENCE, IMPROVED, HARMED],
    ).df()


def trim_entries(con: duckdb.DuckDBPyConnection, delivery_id: str) -> pd.DataFrame:
    """Stored per-entry results of one delivery, decision JSON included (a restatement with an
    unchanged decision stores it once, on the delivery named in `same_as`; it is resolved here)."""
    if not _has(con, "trim_results"):
        return pd.DataFrame(columns=[c for c, _ in TRIM_COLUMNS])
    return con.execute(
        """
        SELECT t.* REPLACE (coalesce(t.decision, r.decision) AS decision)
        FROM trim_results t LEFT JOIN trim_results r ON r.delivery_id = t.same_as AND r.pos = t.pos
        WHERE t.delivery_id = ? ORDER BY t.pos""",
        [delivery_id],
    ).df()
