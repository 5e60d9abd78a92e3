"""Span outcome classes for the app (MemUse A.4.1): the one place app queries read them.

Every span is in exactly one class: the triage label of its verdict (positive, negative,
unresolved, neutral) or one of the classes outside the triage denominator (error, unjudged, empty,
unassessable). The class is decided by the aggregate SQL's `span_cls` building block
(`store.metrics.blocks`), the same expression the Overview's counts come from, so a count and the
list of spans behind it always agree; in particular a judge error on an eligible span without a
verdict is `error` everywhere, not `unjudged` in some places.

`spans_with_outcome` is the only function that knows where the class comes from. Once the class is
decided by a rule and stored with the span, only its body changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pandas as pd

from ...vocab import AXES
from ..metrics import facts
from ._sql import frame

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


def _runs_of(con: duckdb.DuckDBPyConnection, episode_ids: Sequence[str]) -> list[str]:
    rows = con.execute(
        "SELECT DISTINCT run_id FROM episodes WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))",
        [list(episode_ids)],
    ).fetchall()
    return [r[0] for r in rows]


@contextmanager
def spans_with_outcome(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | None = None,
    *,
    episode_ids: Sequence[str] | None = None,
) -> Iterator[str]:
    """A relation (usable after FROM) of the spans in scope with their outcome class, valid inside
    the `with` block: columns `OUTCOME_COLUMNS`.

    `runs` limits it to those runs (None: every run); `episode_ids` to those episodes (their runs
    are the scope then)."""
    if episode_ids is not None:
        runs = _runs_of(con, episode_ids)
    cols = ", ".join(c if c != "outcome" else "triage AS outcome" for c in OUTCOME_COLUMNS)
    with facts(con, runs) as f:
        table = f.ensure("span_cls")
        if episode_ids is None:
            yield f"(SELECT {cols} FROM {table})"
            return
        picked = f"{table}_picked"
        con.execute(
            f"""CREATE TEMP TABLE {picked} AS SELECT {cols} FROM {table}
                WHERE episode_id IN (SELECT unnest(?::VARCHAR[]))""",
            [list(episode_ids)],
        )
        try:
            yield picked
        finally:
            con.execute(f"DROP TABLE IF EXISTS temp.{picked}")


def outcome_counts(con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Span counts and estimated delivered tokens per configuration and outcome class."""
    with spans_with_outcome(con, runs) as rel:
        return frame(
            con,
            f"""SELECT config, outcome, count(*) AS spans, sum(est_tokens) AS est_tokens
                FROM {rel} GROUP BY ALL ORDER BY 1, 2""",
        )


def outcome_spans(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[str] | None = None,
    outcome: str | None = None,
    axis: str | None = None,
    form: str | None = None,
    limit: int = 500,
) -> pd.DataFrame:
    """Spans behind an Overview number: filter by outcome class, a nonzero profile axis or the
    span's delivery form."""
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
    with spans_with_outcome(con, runs) as rel:
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
