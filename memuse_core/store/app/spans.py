"""Span queries of the app: one span's stored context and outcome class, its entries with exposed
text, the target delivery's placements, the prior context B_S, its judgments with transcripts and
assessments; and the harmful entries of a scope."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ..judging import resolve_judge, verdicts_of
from ._sql import frame, scope
from .outcomes import spans_with_outcome


def span_row(con: duckdb.DuckDBPyConnection, span_id: str, judge: str | None = None) -> dict[str, Any] | None:
    """The span's stored context row with its outcome class and current verdict as one judge's
    verdicts see it (default `resolve_judge`; the row's `judge` names it), None when unknown."""
    ep = con.execute("SELECT episode_id FROM spans WHERE span_id = ?", [span_id]).fetchone()
    if ep is None:
        return None
    judge = resolve_judge(con, judge)
    with spans_with_outcome(con, episode_ids=[ep[0]], judge=judge) as rel:
        cur = con.execute(
            f"""
            SELECT s.*, o.outcome, v.judgment_id AS verdict_judgment, v.triage, v.profiled,
                   '{judge}' AS judge
            FROM spans s LEFT JOIN {rel} o USING (span_id) LEFT JOIN verdicts v ON {verdicts_of(judge)}
            WHERE s.span_id = ?""",
            [span_id],
        )
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row))


def span_entries(con: duckdb.DuckDBPyConnection, span_id: str) -> pd.DataFrame:
    """Entries of a span: exposure, window, exposed text and delivered value."""
    # Texts are joined in SQL: 64-bit hashes would lose precision in a float column.
    return frame(
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
    return frame(
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
    return frame(
        con,
        """
        SELECT p.pos, p.kind, p.message_index, p.role, coalesce(b.text, '') AS text, p.chars, p.cut
        FROM prior_sources p LEFT JOIN blobs b ON b.hash = p.text_hash
        WHERE p.span_id = ? ORDER BY p.pos""",
        [span_id],
    )


def span_judgments(con: duckdb.DuckDBPyConnection, span_id: str) -> pd.DataFrame:
    """Every judgment of a span, newest first (without transcripts)."""
    return frame(
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
    """One judgment with its transcript, validation attempts and settings (parsed JSON)."""
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
    return frame(
        con,
        """
        SELECT pos, item_id, relevance, accuracy, novelty, influence, effect, anchors, evidence,
               usage_label, notes, window_read
        FROM assessments WHERE judgment_id = ? ORDER BY pos""",
        [judgment_id],
    )


def harmful_entries(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | None = None,
    limit: int = 200,
    judge: str | None = None,
) -> pd.DataFrame:
    """Entries whose current assessment by one judge (default `resolve_judge`) has a harmed effect
    (for one-click drill-down)."""
    where, params = scope(runs)
    params = [resolve_judge(con, judge), *params]
    return frame(
        con,
        f"""
        SELECT a.span_id, s.episode_id, r.config, se.namespace, se.item_id, se.display_key,
               a.pos, a.usage_label, a.notes
        FROM verdicts v JOIN assessments a ON a.judgment_id = v.judgment_id AND v.judge = ?
             JOIN spans s ON s.span_id = v.span_id JOIN episodes e ON e.episode_id = s.episode_id
             LEFT JOIN runs r ON r.run_id = e.run_id
             LEFT JOIN span_entries se ON se.span_id = a.span_id AND se.pos = a.pos
        WHERE a.effect = 'harmed' AND {where}
        ORDER BY r.config, s.episode_id LIMIT {int(limit)}""",
        params,
    )
