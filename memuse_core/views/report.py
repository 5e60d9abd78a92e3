"""Task outcomes, delivery forms and cost per configuration or run (MemUse 4.3, Figure 5, A.5.4,
A.6.5, A.6.7), shared by the Overview and Compare views."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from pydantic import Field

from .. import charts as figures
from .. import metrics
from ..metrics import GroupStats
from .common import Connection, Scope, ViewModel
from .display import NumberFormat

OUTCOME_FORMATS: dict[str, NumberFormat] = {
    "rate": "percent",
    "runs": "count",
    "episodes": "count",
    "diff vs baseline (pp)": "pp",
    "95% CI low (pp)": "pp",
    "95% CI high (pp)": "pp",
    "gains": "decimal",
    "losses": "decimal",
}
"""How the task-outcome table's numbers are shown."""
FORM_FORMATS: dict[str, NumberFormat] = {
    "token_share": "percent",
    "beneficial_share": "percent",
    "tokens": "tokens",
    "beneficial": "count",
    "judged": "count",
    "acted_on": "count",
    "harmful": "count",
}
"""How the delivery-form table's numbers are shown."""
COST_FORMATS: dict[str, NumberFormat] = {
    "agent $/episode": "usd",
    "memory $/episode": "usd",
    "agent tokens/episode": "tokens",
    "judged spans": "count",
    "judge attempts": "count",
    "judge calls": "count",
    "judge cost $": "usd",
    "judge $/span": "usd",
    "resolve rate": "percent",
}
"""How the cost table's numbers are shown."""


def _pp(x: float | None) -> float | None:
    return None if x is None else 100 * x


class OutcomeRow(ViewModel):
    """Task outcomes of one group (A.5.4)."""

    group: str
    """Configuration or run."""
    rate: float | None = None
    """Resolve rate (mean over runs for a configuration)."""
    low: float | None = None
    """Rate minus one sample SD across runs (None with one run)."""
    high: float | None = None
    """Rate plus one sample SD across runs."""
    runs: int = 0
    """Runs pooled."""
    episodes: int = 0
    """Episodes."""
    diff_pp: float | None = Field(None, alias="diff vs baseline (pp)")
    """Resolve-rate difference from the baseline, percentage points."""
    ci_low_pp: float | None = Field(None, alias="95% CI low (pp)")
    """Paired bootstrap 95% interval, low end (pp)."""
    ci_high_pp: float | None = Field(None, alias="95% CI high (pp)")
    """Paired bootstrap 95% interval, high end (pp)."""
    gains: float | None = None
    """Tasks resolved here but not in the baseline, averaged over run pairs."""
    losses: float | None = None
    """Tasks resolved in the baseline but not here."""


class FormShare(ViewModel):
    """One delivery form of one group (Figure 5, A.6.5)."""

    group: str
    """Configuration or run."""
    form: str
    """Delivery form."""
    route: str
    """Delivery route."""
    token_share: float | None = None
    """Share of estimated delivered tokens."""
    beneficial_share: float | None = None
    """Share of beneficial entries."""
    tokens: float = 0.0
    """Estimated delivered tokens."""
    beneficial: int = 0
    """Beneficial entries."""
    judged: int = 0
    """Judged entries."""
    acted_on: int = 0
    """Acted-on entries."""
    harmful: int = 0
    """Harmful entries."""


class CostRow(ViewModel):
    """Recorded agent and memory cost, and judge cost, of one group (A.6.7)."""

    group: str
    """Configuration or run."""
    agent_per_episode: float | None = Field(None, alias="agent $/episode")
    """Agent cost per episode, USD."""
    memory_per_episode: float | None = Field(None, alias="memory $/episode")
    """Memory-system cost per episode, USD."""
    agent_tokens_per_episode: float | None = Field(None, alias="agent tokens/episode")
    """Agent input + output tokens per episode."""
    judged_spans: int = Field(0, alias="judged spans")
    """Spans with at least one judge attempt."""
    judge_attempts: int = Field(0, alias="judge attempts")
    """Judge attempts."""
    judge_calls: int = Field(0, alias="judge calls")
    """Judge model calls."""
    judge_cost: float | None = Field(None, alias="judge cost $")
    """Judge cost, USD (None: no attempt has a known cost)."""
    judge_per_span: float | None = Field(None, alias="judge $/span")
    """Judge cost per judged span, USD."""
    judges: str | None = None
    """Judge kinds seen."""
    resolve_rate: float | None = Field(None, alias="resolve rate")
    """Resolve rate."""


class Report(ViewModel):
    """Outcomes, forms and cost of some groups, from one judge's verdicts."""

    judge: str = "rules"
    """The judge whose verdicts the forms' benefit and the judge cost read (titles name it)."""
    outcomes: list[OutcomeRow]
    """Task outcomes per group."""
    forms: list[FormShare]
    """Delivery forms per group."""
    costs: list[CostRow]
    """Cost per group."""

    def resolve_chart(self) -> go.Figure:
        """Resolve rates with ±1 SD whiskers."""
        return figures.resolve_rate_chart([r.model_dump() for r in self.outcomes])

    def forms_chart(self) -> go.Figure:
        """Figure 5: share of tokens vs share of beneficial entries per form."""
        return figures.form_share_chart([f.model_dump() for f in self.forms])

    def outcome_table(self) -> pd.DataFrame:
        """Outcomes as a table (without the whisker bounds)."""
        return pd.DataFrame([r.model_dump(by_alias=True, exclude={"low", "high"}) for r in self.outcomes])

    def form_table(self) -> pd.DataFrame:
        """Delivery forms as a table."""
        return pd.DataFrame([f.model_dump() for f in self.forms])

    def cost_table(self) -> pd.DataFrame:
        """Cost as a table."""
        return pd.DataFrame([c.model_dump(by_alias=True) for c in self.costs])


def _rows(label: str, g: GroupStats) -> tuple[OutcomeRow, list[FormShare], CostRow]:
    o, c = g.outcome, g.cost
    sd = o.resolve_rate_sd
    both = o.resolve_rate is not None and sd is not None
    outcome = OutcomeRow.model_validate(
        {
            "group": label,
            "rate": o.resolve_rate,
            "low": o.resolve_rate - sd if both else None,  # type: ignore[operator]
            "high": o.resolve_rate + sd if both else None,  # type: ignore[operator]
            "runs": o.runs,
            "episodes": o.episodes,
            "diff vs baseline (pp)": _pp(o.diff),
            "95% CI low (pp)": _pp(o.diff_ci_low),
            "95% CI high (pp)": _pp(o.diff_ci_high),
            "gains": o.gains,
            "losses": o.losses,
        }
    )
    forms = [FormShare.model_validate(f.model_dump() | {"group": label}) for f in g.forms]
    cost = CostRow.model_validate(
        {
            "group": label,
            "agent $/episode": c.agent_cost_per_episode,
            "memory $/episode": c.memory_cost_per_episode,
            "agent tokens/episode": c.agent_tokens_per_episode,
            "judged spans": c.judged_spans,
            "judge attempts": c.judge_attempts,
            "judge calls": c.judge_calls,
            "judge cost $": c.judge_cost,
            "judge $/span": c.judge_cost_per_span,
            "judges": c.judges,
            "resolve rate": o.resolve_rate,
        }
    )
    return outcome, forms, cost


def report(
    con: Connection,
    runs: Scope = None,
    baseline: str | None = None,
    *,
    runs_as_groups: Sequence[str] = (),
    judge: str | None = None,
) -> Report:
    """Outcomes, forms and cost per configuration of the scope (compared with `baseline` when
    given); with `runs_as_groups`, one group per listed run instead. One judge's verdicts
    (`judge`, default `store.judging.resolve_judge`), named in `Report.judge`."""
    rep = metrics.build_report(con, runs, baseline, judge=judge)
    groups: list[tuple[str, GroupStats]] = []
    if runs_as_groups:
        for cs in rep.configs.values():
            groups += [(r, g) for r, g in cs.runs.items() if r in runs_as_groups]
        groups.sort(key=lambda x: list(runs_as_groups).index(x[0]))
    else:
        groups = list(rep.configs.items())
    out = Report(judge=rep.judge, outcomes=[], forms=[], costs=[])
    for label, g in groups:
        o, f, c = _rows(label, g)
        out.outcomes.append(o)
        out.forms += f
        out.costs.append(c)
    return out
