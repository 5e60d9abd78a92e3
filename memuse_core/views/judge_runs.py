"""Judge runs view (MemUse A.4.1, A.6.8): judging progress over the span outcome classes, batches
with counts and cost, and per batch the errors by reason, follow-ups and forced answers."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from ..store.app import judge_runs as store_judge
from ..store.app import outcomes as store_outcomes
from ..vocab import OUTCOME_CLASSES, OutcomeClass
from .common import Connection, Scope, ViewModel
from .display import NumberFormat

NOT_JUDGED: tuple[OutcomeClass, ...] = ("empty", "unassessable")
"""Outcome classes of spans that never reach the judge (A.1.6); every other class does."""
PENDING: OutcomeClass = "unjudged"
"""Outcome class of a judgeable span with neither a verdict nor a judge error yet."""


class JudgeRuns(ViewModel):
    """Judging progress and every judge batch."""

    classes: dict[OutcomeClass, int]
    """Spans per outcome class (A.4.1), every class present (0 when none)."""
    recording_errors: int = 0
    """Spans of the `error` class whose episode failed a recording check (A.1.3): never sent to a
    judge, so neither judgeable nor pending; the other `error` spans are judge failures."""
    batches: pd.DataFrame
    """One row per batch, newest first: batch_id, batch_judge, judge, model (none for the rules
    judge), status, started_at,
    ended_at, judgments, accepted, errors, cost_usd, input/cached/output tokens, calls,
    mean_followups, forced."""

    @property
    def judgeable(self) -> int:
        """Spans that reach the judge."""
        return sum(n for c, n in self.classes.items() if c not in NOT_JUDGED) - self.recording_errors

    @property
    def judge_errors(self) -> int:
        """Spans of the `error` class whose judge failed."""
        return self.classes["error"] - self.recording_errors

    @property
    def pending(self) -> int:
        """Judgeable spans with neither a verdict nor an error yet."""
        return self.classes[PENDING]

    @property
    def done(self) -> int:
        """Judgeable spans with a verdict or a judge error."""
        return self.judgeable - self.pending

    @property
    def batch_ids(self) -> list[str]:
        """Batch ids, newest first."""
        return list(self.batches["batch_id"])

    def total(self, column: str) -> float:
        """Sum of a batch column over every batch (missing values as 0)."""
        return float(self.batches[column].fillna(0).sum()) if len(self.batches) else 0.0

    def cost_total(self) -> float | None:
        """Judge cost over every batch; None when no batch has a known cost (A.4.4: unknown stays
        unknown, never $0), else the sum of the known ones."""
        if not len(self.batches) or self.batches["cost_usd"].isna().all():
            return None
        return float(self.batches["cost_usd"].fillna(0).sum())


BATCH_FORMATS: dict[str, NumberFormat] = {
    "judgments": "count",
    "accepted": "count",
    "errors": "count",
    "cost_usd": "usd",
    "input_tokens": "tokens",
    "cached_tokens": "tokens",
    "output_tokens": "tokens",
    "calls": "count",
    "mean_followups": "decimal",
    "forced": "count",
}
"""How the batch table's numbers are shown."""
COST_FORMATS: dict[str, NumberFormat] = {
    "cost_usd": "usd",
    "input_tokens": "tokens",
    "output_tokens": "tokens",
}
"""How the judge-cost table's numbers are shown."""


def _without_rules_model(batches: pd.DataFrame) -> pd.DataFrame:
    """The rules judge calls no model: its batches show none (its settings may still carry the
    LLM default)."""
    if not len(batches):
        return batches
    out = batches.copy()
    rules = (out["judge"] == "rules") | (out["batch_judge"] == "rules")
    out["model"] = out["model"].where(~rules, None)
    return out


def judge_runs(con: Connection, runs: Scope = None) -> JudgeRuns:
    """Outcome-class counts of the spans in scope and every judge batch."""
    counts = store_outcomes.outcome_counts(con, runs)
    by_class = counts.groupby("outcome")["spans"].sum() if len(counts) else pd.Series(dtype=int)
    classes = {c: int(by_class.get(c, 0)) for c in OUTCOME_CLASSES}
    return JudgeRuns(
        classes=classes,
        recording_errors=int(counts["recording_errors"].sum()) if len(counts) else 0,
        batches=_without_rules_model(store_judge.judge_batches(con)),
    )


class BatchDetail(ViewModel):
    """Errors, follow-ups and cost of one batch (or of every batch)."""

    batch_id: str | None
    """The batch (None: every batch)."""
    errors: pd.DataFrame
    """Judgments without an accepted answer by reason: reason, judgments, example_span."""
    followups: pd.DataFrame
    """Judgments per follow-up count and status: followups, status, judgments, forced."""
    followups_chart: go.Figure | None
    """Stacked bars of `followups` (None when there are no judgments)."""
    cost: pd.DataFrame
    """Judge cost and tokens per configuration and judge kind."""


def _followups_chart(fu: pd.DataFrame) -> go.Figure | None:
    if not len(fu):
        return None
    fig = px.bar(
        fu.astype({"followups": str}),
        x="followups",
        y="judgments",
        color="status",
        barmode="stack",
        labels={"followups": "follow-ups (rejected answers sent back)"},
    )
    fig.update_xaxes(type="category")
    return fig


def batch_detail(con: Connection, batch_id: str | None = None, runs: Scope = None) -> BatchDetail:
    """Errors by reason, follow-up counts and judge cost (of one batch, or of all)."""
    fu = store_judge.judge_followups(con, batch_id)
    return BatchDetail(
        batch_id=batch_id,
        errors=store_judge.judge_errors(con, batch_id),
        followups=fu,
        followups_chart=_followups_chart(fu),
        cost=store_judge.judge_cost(con, runs),
    )
