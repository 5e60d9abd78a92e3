"""The stored outcome class of every span, per judge kind (MemUse A.4.1, A.4.2): `span_outcomes`.

`refresh_outcomes` reads each span's status, its current verdict of each judge kind (the rule
verdict of an automatic neutral span counts for every judge) and that judge's failed attempts, asks
the pure rules (`rules.outcome.outcome_class`, `is_profiled`) and writes one row per span and judge
kind. It runs inside the writers' transactions: when the context of an episode is written
(`store.context.write_contexts`) and when judgments or rule verdicts are written
(`store.judging`). Every reader (aggregates, drill-downs, lineage, app) joins this table for the
one judge it shows instead of deciding the class again.

A judge attempt that failed for a transport failure (`vocab.TRANSPORT_REASON`) does not make the
span an error span: the span is pending (`unjudged`) until a later batch judges it.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from ..rules.outcome import is_profiled, outcome_class
from ..vocab import ERROR_JUDGMENT_STATUSES, JUDGE_KINDS, RULE_JUDGE, TRANSPORT_REASON
from .row_insert import insert_rows

_COLS = ["span_id", "judge", "episode_id", "outcome", "profiled"]


def refresh_outcomes(
    con: duckdb.DuckDBPyConnection,
    *,
    episode_ids: Sequence[str] | None = None,
    span_ids: Sequence[str] | None = None,
) -> int:
    """Recompute the stored outcome of the spans of `episode_ids`, of `span_ids`, or (neither
    given) of every span, for every judge kind; rows of spans that no longer exist in those
    episodes are removed. The caller holds the transaction. Returns the number of rows written."""
    if episode_ids is not None:
        where, args = "s.episode_id IN (SELECT unnest($ids::VARCHAR[]))", {"ids": list(episode_ids)}
        gone = "DELETE FROM span_outcomes WHERE episode_id IN (SELECT unnest($ids::VARCHAR[]))"
    elif span_ids is not None:
        where, args = "s.span_id IN (SELECT unnest($ids::VARCHAR[]))", {"ids": list(span_ids)}
        gone = "DELETE FROM span_outcomes WHERE span_id IN (SELECT unnest($ids::VARCHAR[]))"
    else:
        where, args, gone = "TRUE", {}, "DELETE FROM span_outcomes"
    rows = con.execute(
        f"""SELECT s.span_id, s.episode_id, s.status, k.judge, v.triage, v.profiled, v.n_entries,
                   ej.span_id IS NOT NULL AS judge_failed
            FROM spans s
            CROSS JOIN (SELECT unnest($kinds::VARCHAR[]) AS judge) k
            LEFT JOIN verdicts v ON v.span_id = s.span_id
                 AND v.judge = CASE WHEN s.status = 'auto_neutral' THEN $rule ELSE k.judge END
            LEFT JOIN (SELECT DISTINCT span_id, judge FROM judgments
                       WHERE status IN (SELECT unnest($failed::VARCHAR[]))
                         AND coalesce(reason, '') NOT LIKE $transport) ej
                 ON ej.span_id = s.span_id AND ej.judge = k.judge
            WHERE {where}""",
        {
            **args,
            "kinds": list(JUDGE_KINDS),
            "rule": RULE_JUDGE,
            "failed": list(ERROR_JUDGMENT_STATUSES),
            "transport": TRANSPORT_REASON + ":%",
        },
    ).fetchall()
    con.execute(gone, args)
    if not rows:
        return 0
    out = [
        (
            sid,
            judge,
            eid,
            outcome_class(status, triage, failed),
            is_profiled(status, triage, profiled, n_entries),
        )
        for sid, eid, status, judge, triage, profiled, n_entries, failed in rows
    ]
    insert_rows(con, "span_outcomes", _COLS, out)
    return len(out)


def backfill_outcomes(con: duckdb.DuckDBPyConnection) -> None:
    """Fill `span_outcomes` when it is empty but spans exist (a store built before the table
    existed, or whose table was recreated)."""
    have = con.execute("SELECT (SELECT count(*) FROM span_outcomes), (SELECT count(*) FROM spans)").fetchone()
    if have is not None and have[0] == 0 and have[1] > 0:
        refresh_outcomes(con)
