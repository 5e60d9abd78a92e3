"""Queries of the demo area: bulk loading, and loading and reading the planted truth.

`planted_truth` holds, for the first delivery of every span-like unit of the demo corpus, what the
generator made the agent do with each entry; it is what the judges are measured against.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

TRUTH_COLUMNS: list[tuple[str, pa.DataType]] = [
    ("episode_id", pa.string()),
    ("delivery_id", pa.string()),
    ("pos", pa.int32()),
    ("namespace", pa.string()),
    ("item_id", pa.string()),
    ("relevance", pa.bool_()),
    ("novelty", pa.string()),
    ("influence", pa.string()),
    ("effect", pa.string()),
    ("anchor_step", pa.int32()),
    ("note", pa.string()),
    ("form", pa.string()),
    ("copy", pa.bool_()),
    ("broken", pa.bool_()),
    ("origin_episode", pa.string()),
    ("hint", pa.string()),
]


def load_truth(con: duckdb.DuckDBPyConnection, path: str | Path, *, batch: int = 50_000) -> int:
    """Append the rows of a `planted_truth.jsonl` file (replacing rows of the same episodes)."""
    names = [c for c, _ in TRUTH_COLUMNS]
    # Stores created before these columns existed get them here (the table is demo-only).
    for col, typ in (
        ("form", "VARCHAR"),
        ("copy", "BOOLEAN"),
        ("broken", "BOOLEAN"),
        ("origin_episode", "VARCHAR"),
        ("hint", "VARCHAR"),
    ):
        con.execute(f"ALTER TABLE planted_truth ADD COLUMN IF NOT EXISTS {col} {typ}")
    n = 0
    rows: list[dict[str, Any]] = []

    def flush() -> None:
        if not rows:
            return
        tbl = pa.Table.from_arrays(
            [pa.array([r.get(c) for r in rows], type=t) for c, t in TRUTH_COLUMNS], names=names
        )
        con.register("_demo_truth", tbl)
        try:
            con.execute(
                "DELETE FROM planted_truth WHERE episode_id IN (SELECT DISTINCT episode_id FROM _demo_truth)"
            )
            con.execute(
                f"INSERT INTO planted_truth ({', '.join(names)}) SELECT {', '.join(names)} FROM _demo_truth"
            )
        finally:
            con.unregister("_demo_truth")
        rows.clear()

    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
                n += 1
                if len(rows) >= batch:
                    flush()
    flush()
    return n


def bulk_load(con: duckdb.DuckDBPyConnection, checkpoint_threshold: str) -> None:
    """Checkpoint once at the end of a bulk load instead of once per 16 MB of WAL, so indexes and
    row groups are not rewritten again and again (smaller file, less work)."""
    con.execute(f"SET checkpoint_threshold = '{checkpoint_threshold}'")


def load_truth_file(con: duckdb.DuckDBPyConnection, path: str | Path) -> int:
    """`load_truth` in its own transaction, then a checkpoint."""
    con.execute("BEGIN TRANSACTION")
    try:
        n = load_truth(con, path)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("CHECKPOINT")
    return n


def restatement_token_share(con: duckdb.DuckDBPyConnection) -> dict[str, float]:
    """Per configuration: share of delivered placement characters that repeat an earlier delivery
    of the same episode with identical placement text (restatements, MemUse A.6.5)."""
    rows = con.execute(
        """WITH d AS (
             SELECT r.config, p.chars, row_number() OVER (
                 PARTITION BY d.episode_id, p.text_hash ORDER BY d.seq) AS k
             FROM deliveries d JOIN (SELECT delivery_id, sum(size) AS chars, min(text_hash) AS text_hash
                                     FROM placements GROUP BY 1) p USING (delivery_id)
             JOIN episodes e ON e.episode_id = d.episode_id JOIN runs r USING (run_id))
           SELECT config, sum(chars) FILTER (WHERE k > 1) / sum(chars) FROM d GROUP BY 1"""
    ).fetchall()
    return {c: float(v or 0.0) for c, v in rows}


def harmful_cards_across_runs(
    con: duckdb.DuckDBPyConnection, min_runs: int = 2
) -> list[tuple[str, str, int]]:
    """(item_id, task_id, runs) of items planted as harmful on the same task in several runs."""
    return [
        tuple(r)
        for r in con.execute(
            """SELECT t.item_id, e.task_id, count(DISTINCT e.run_id) AS runs
           FROM planted_truth t JOIN episodes e USING (episode_id)
           WHERE t.effect = 'harmed' GROUP BY 1, 2 HAVING count(DISTINCT e.run_id) >= ? ORDER BY 3 DESC, 1""",
            [min_runs],
        ).fetchall()
    ]


def qualitative_findings(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """The paper's qualitative findings measured on the planted truth (MemUse 4.2-4.4, A.6.5-A.6.6)."""

    def one(sql: str, *args: Any) -> Any:
        row = con.execute(sql, list(args)).fetchone()
        return row[0] if row else None

    memory = "SELECT episode_id FROM episodes JOIN runs USING (run_id) WHERE config <> 'baseline'"
    out: dict[str, Any] = {}
    out["relevance_share"] = one(
        f"SELECT avg(CAST(relevance AS INT)) FROM planted_truth WHERE NOT copy AND episode_id IN ({memory})"
    )
    out["relevant_unused_share"] = one(
        "SELECT avg(CAST(influence = 'none' AS INT)) FROM planted_truth WHERE relevance AND NOT copy"
    )
    out["restatement_share"] = restatement_token_share(con)
    out["preview_selected_share"] = one(
        "SELECT avg(CAST(influence = 'selected' AS INT)) FROM planted_truth "
        "WHERE form IN ('search_preview', 'skill_catalog', 'scene_index') AND influence <> 'none'"
    )
    out["searches_with_full_read"] = one(
        """SELECT avg(CAST(EXISTS (SELECT 1 FROM planted_truth t WHERE t.delivery_id = d.delivery_id
                                  AND t.influence = 'selected') AS INT))
           FROM deliveries d WHERE d.form = 'search_preview' AND d.n_entries > 0"""
    )
    out["harmful_cards_across_runs"] = harmful_cards_across_runs(con)
    out["improved_in_failed_episodes"] = one(
        "SELECT count(DISTINCT episode_id) FROM planted_truth JOIN episodes USING (episode_id) "
        "WHERE effect = 'improved' AND resolved = false"
    )
    out["harmed_in_resolved_episodes"] = one(
        "SELECT count(DISTINCT episode_id) FROM planted_truth JOIN episodes USING (episode_id) "
        "WHERE effect = 'harmed' AND resolved"
    )
    out["failed_origin_later_helps"] = one(
        "SELECT count(*) FROM planted_truth t JOIN episodes o ON o.episode_id = t.origin_episode "
        "WHERE t.effect = 'improved' AND o.resolved = false AND o.episode_id <> t.episode_id"
    )
    out["cross_repo_improved"] = one(
        "SELECT count(*) FROM planted_truth t JOIN episodes e USING (episode_id) "
        "JOIN episodes o ON o.episode_id = t.origin_episode WHERE t.effect = 'improved' AND o.repo <> e.repo"
    )
    return out
