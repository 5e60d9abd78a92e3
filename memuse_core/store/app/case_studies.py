"""Annotations and case studies: the app's reads and its only writes (MemUse Studio's human labels).

Writes take plain rows keyed by the tables' columns; each runs in the caller's short read-write
connection."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ..judging import resolve_judge
from ._sql import frame


def list_annotations(
    con: duckdb.DuckDBPyConnection,
    case_study_id: str | None = None,
    target_kind: str | None = None,
    target_id: str | None = None,
) -> pd.DataFrame:
    """Annotations, newest first, optionally of one case study or one target."""
    return frame(
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
    """Case studies, newest first, with their annotation counts."""
    return frame(
        con,
        """
        SELECT c.case_study_id, c.name, c.description, c.created_at, count(a.annotation_id) AS annotations
        FROM case_studies c LEFT JOIN annotations a USING (case_study_id)
        GROUP BY ALL ORDER BY c.created_at DESC, c.case_study_id""",
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


def delete_annotations(con: duckdb.DuckDBPyConnection, annotation_ids: Sequence[str]) -> None:
    """Remove annotations."""
    con.execute(
        "DELETE FROM annotations WHERE annotation_id IN (SELECT unnest(?::VARCHAR[]))", [list(annotation_ids)]
    )


def upsert_case_study(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    """Insert or replace a case study's name and description."""
    con.execute(
        """INSERT OR REPLACE INTO case_studies (case_study_id, name, description, created_at)
           VALUES (?, ?, ?, ?)""",
        [row["case_study_id"], row["name"], row.get("description", ""), row["created_at"]],
    )


def assign_annotations(
    con: duckdb.DuckDBPyConnection, annotation_ids: Sequence[str], case_study_id: str | None
) -> None:
    """Collect annotations into a case study (None removes them from any)."""
    con.execute(
        """UPDATE annotations SET case_study_id = ?
           WHERE annotation_id IN (SELECT unnest(?::VARCHAR[]))""",
        [case_study_id, list(annotation_ids)],
    )


def store_case_study(
    con: duckdb.DuckDBPyConnection, case_row: dict[str, Any], annotation_rows: Sequence[dict[str, Any]]
) -> None:
    """Insert or replace a case study and its annotations in one transaction (all or nothing)."""
    con.execute("BEGIN")
    try:
        upsert_case_study(con, case_row)
        for row in annotation_rows:
            upsert_annotation(con, row)
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def judge_labels_for(
    con: duckdb.DuckDBPyConnection, targets: Sequence[tuple[str, int]], judge: str | None = None
) -> pd.DataFrame:
    """Current assessments of one judge (default `resolve_judge`) of (span_id, entry pos) pairs,
    for human-vs-judge agreement."""
    if not targets:
        return pd.DataFrame(
            columns=["span_id", "pos", "relevance", "accuracy", "novelty", "influence", "effect"]
        )
    judge = resolve_judge(con, judge)
    return frame(
        con,
        """
        SELECT t.span_id, t.pos, a.relevance, a.accuracy, a.novelty, a.influence, a.effect
        FROM (SELECT unnest(?::VARCHAR[]) AS span_id, unnest(?::INTEGER[]) AS pos) t
             JOIN verdicts v ON v.span_id = t.span_id AND v.judge = ?
             JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = t.pos""",
        [[s for s, _ in targets], [int(p) for _, p in targets], judge],
    )
