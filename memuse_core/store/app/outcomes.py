"""Span outcome classes for the app (MemUse A.4.1): the one place app queries read them.

Every span is in exactly one class: the triage label of its verdict (positive, negative,
unresolved, neutral) or one of the classes outside the triage denominator (error, unjudged, empty,
unassessable). The class is decided once by `rules.outcome` and stored in `span_outcomes`, which the Overview's
counts read too, so a count and the list of spans behind it always agree; in particular a judge
error on an eligible span without a verdict is `error` everywhere.

`spans_with_outcome` is the only app function that reads where the class is kept. Classes and
verdicts are kept per judge kind: every function takes the one `judge` it shows (default
`store.judging.resolve_judge`: the LLM judge when it has accepted verdicts, else the rules judge).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pandas as pd

from ...vocab import AXES
from ..judging import resolve_judge, verdicts_of
from ._sql import frame, scope

OUTCOME_COLUMNS = (
    "span_id",
    "episode_id",
    "run_id",
    "config",
    "status",
    "form",
    "first_step",
    "est_tokens",
    "outcome",
    *AXES,
)
"""Columns of the relation `spans_with_outcome` yields; `outcome` is the span's outcome class."""


@contextmanager
def spans_with_outcome(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | None = None,
    *,
    episode_ids: Sequence[str] | None = None,
    judge: str | None = None,
) -> Iterator[str]:
    """A relation (usable after FROM) of the spans in scope with their stored outcome class as
    `judge`'s verdicts see it (default `resolve_judge`), valid inside the `with` block: columns
    `OUTCOME_COLUMNS`.

    `runs` limits it to those runs (None: every run); `episode_ids` to those episodes."""
    judge = resolve_judge(con, judge)
    where, params = scope(runs)
    if episode_ids is not None:
        where += " AND s.episode_id IN (SELECT unnest(?::VARCHAR[]))"
        params.append(list(episode_ids))
    table = f"_outcomes_{uuid.uuid4().hex[:12]}"
    con.execute(
        f"""
        CREATE TEMP TABLE {table} AS
        SELECT s.span_id, s.episode_id, e.run_id, coalesce(r.config, e.run_id) AS config, s.status,
               s.form, s.first_step, s.est_tokens, so.outcome, {", ".join("v." + a for a in AXES)}
        FROM spans s JOIN episodes e USING (episode_id) LEFT JOIN runs r ON r.run_id = e.run_id
             LEFT JOIN span_outcomes so ON so.span_id = s.span_id AND so.judge = '{judge}'
             LEFT JOIN verdicts v ON {verdicts_of(judge)}
        WHERE {where}""",
        params,
    )
    try:
        yield table
    finally:
        con.execute(f"DROP TABLE IF EXISTS temp.{table}")


def outcome_counts(
    con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None, judge: str | None = None
) -> pd.DataFrame:
    """Span counts and estimated delivered tokens per configuration and outcome class, as `judge`'s
    verdicts see them; `recording_errors`: the class's spans whose episode failed a recording check
    (status `error`, never sent to a judge, A.1.3) rather than a judge."""
    with spans_with_outcome(con, runs, judge=judge) as rel:
        return frame(
            con,
            f"""SELECT config, outcome, count(*) AS spans, sum(est_tokens) AS est_tokens,
                       count(*) FILTER (WHERE status = 'error') AS recording_errors
                FROM {rel} GROUP BY ALL ORDER BY 1, 2""",
        )


def outcome_spans(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | None = None,
    outcome: str | None = None,
    axis: str | None = None,
    form: str | None = None,
    limit: int = 500,
    judge: str | None = None,
) -> pd.DataFrame:
    """Spans behind an Overview number (as `judge`'s verdicts see them): filter by outcome class,
    a nonzero profile axis or the span's delivery form."""
    where, params = ["TRUE"], list[Any]()
    if outcome:
        where.append("o.outcome = ?")
        params.append(outcome)
    if axis:
        if axis not in AXES:
            raise ValueError(f"unknown profile axis {axis!r}")
        where.append(f"o.{axis} > 0")
    if form:
        where.append("o.form = ?")
        params.append(form)
    with spans_with_outcome(con, runs, judge=judge) as rel:
        return frame(
            con,
            f"""
            SELECT o.span_id, o.episode_id, o.config, o.run_id, o.status, o.form, o.first_step,
                   s.n_entries, o.est_tokens, o.outcome, {", ".join("o." + a for a in AXES)}
            FROM {rel} o JOIN spans s USING (span_id)
            WHERE {" AND ".join(where)}
            ORDER BY o.episode_id, o.first_step, o.span_id LIMIT {int(limit)}""",
            params,
        )
