"""Aggregates, yields, efficiency, coverage, recurring items, delivery forms, memory histories,
cost and the paired bootstrap (MemUse 3.5-3.6, A.4, A.5.4, A.6.3-A.6.6).

Entry points (used by `memuse report` and by the app):

- `build_report(con, runs=None, baseline=None, seed=0)` -> `Report`: everything, per configuration
  pooled over its runs with each run nested (`Report.configs[cfg].runs[run]`).
- `group_stats(con, runs=None, level="config"|"run"|"both", details=False)` ->
  {(config, run or None): GroupStats}: with `details=False` the overview only (profiles, triage,
  yields, efficiency, coverage, recurring items), three DuckDB queries; with `details=True` also
  use/effects, delivery forms, histories, outcomes and cost, sharing materialised building
  blocks (`memuse_core.store.metrics.facts`).
- `overview_frame(con, runs=None, level="config")` -> DataFrame: one row per group for a table
  or a chart (shares as fractions, undefined as NaN).
- `report_tables(report, by)` -> {name: DataFrame}; `render_markdown`, `render_json`,
  `render_csv`, `write_report`.

Decisions where the paper leaves room (all in one place here):
- an episode without a harness result has no outcome: resolve rates, the paired bootstrap,
  gains and losses, episode-outcome groups (Table 9) and source outcomes (Table 12) leave it out
  (a rate with no outcome at all is undefined, "—"), and it is reported as `no_result`;
- gains and losses compare tasks that both runs attempted;
- recurrence is decided within each run (E = selected episodes of that run), pooled afterwards;
- a span's outcome class: span status first (error, empty, unassessable, auto-neutral), then the
  verdict's triage, then `error` when a judge attempt failed, otherwise `unjudged`;
- summed counts are share x |M_S| of each profiled span's verdict;
- origin of a beneficial/harmful entry: the recorded write of its delivered version (create or
  update) in the same store (run or shared corpus); see `effect_origins`.
- Row-level frames straight from the store, for drill-downs: `effect_origins`, `item_effects`,
  `episode_costs`, `recurring_items`, `delivery_forms`, `task_outcomes`, `list_runs`
  (see `memuse_core.store.metrics`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..store import Connection
from ..store.metrics import (
    delivery_forms,
    effect_origins,
    episode_costs,
    item_effects,
    list_runs,
    recurring_items,
    task_outcomes,
)
from .aggregate import build_report, group_stats, histories, origin_summary, ratio
from .models import (
    ConfigStats,
    Cost,
    Coverage,
    FormRow,
    GroupStats,
    Histories,
    ItemEffect,
    OriginSummary,
    Outcome,
    Profile,
    ProfileCounts,
    Recurring,
    Report,
    Triage,
    TriageRates,
    Uncertainty,
    UseEffects,
    Yields,
)
from .outcomes import BOOTSTRAP_REPLICATES, paired_bootstrap
from .render import markdown_table, render_csv, render_json, render_markdown, write_report
from .tables import UNDEFINED, report_tables


def overview_frame(
    con: Connection, runs: Sequence[str] | None = None, level: str = "config", judge: str | None = None
) -> pd.DataFrame:
    """One row per configuration (or run): profile means, yields, token efficiency, triage rates
    and coverage, from the verdicts of one judge (`judge`, default `store.judging.resolve_judge`),
    named in the `judge` column and in `frame.attrs["judge"]`. Shares are fractions; undefined
    values are NaN. Backs the app's overview page."""
    from ..store.judging import resolve_judge

    judge = resolve_judge(con, judge)
    stats = group_stats(con, runs, level, details=False, judge=judge)  # type: ignore[arg-type]
    rows = []
    for (cfg, run), g in stats.items():
        row: dict[str, object] = {
            "config": cfg,
            "run_id": run,
            "judge": judge,
            "episodes": g.episodes,
            "spans": g.spans,
            "profiled_spans": g.profiled_spans,
        }
        row |= g.profile.model_dump()
        row |= {f"u_{k}": v for k, v in g.uncertainty.model_dump().items()}
        row |= {
            "benefit_yield": g.yields.benefit,
            "harm_yield": g.yields.harm,
            "token_efficiency": g.token_efficiency,
            "est_tokens": g.est_tokens,
            "n_triage": g.n_triage,
            "auto_neutral": g.auto_neutral,
        }
        row |= {f"triage_{k}": v for k, v in g.triage.model_dump().items()}
        row |= {f"rate_{k}": v for k, v in g.triage_rates.model_dump().items()}
        row |= {
            f"coverage_{k}": getattr(g.coverage, k) for k in ("profiled", "relevant", "beneficial", "harmful")
        }
        row |= {
            "recurring_items": g.recurring.recurring_items,
            "relevant_from_recurring": g.recurring.share_from_recurring,
            "relevance_coverage_without_recurring": g.recurring.relevance_coverage_without,
        }
        rows.append(row)
    df = pd.DataFrame(rows).astype({"run_id": object}) if rows else pd.DataFrame()
    df.attrs["judge"] = judge
    return df


__all__ = [
    "BOOTSTRAP_REPLICATES",
    "UNDEFINED",
    "ConfigStats",
    "Cost",
    "Coverage",
    "FormRow",
    "GroupStats",
    "Histories",
    "ItemEffect",
    "OriginSummary",
    "Outcome",
    "Profile",
    "ProfileCounts",
    "Recurring",
    "Report",
    "Triage",
    "TriageRates",
    "Uncertainty",
    "UseEffects",
    "Yields",
    "build_report",
    "delivery_forms",
    "effect_origins",
    "episode_costs",
    "group_stats",
    "histories",
    "item_effects",
    "list_runs",
    "markdown_table",
    "origin_summary",
    "overview_frame",
    "paired_bootstrap",
    "ratio",
    "recurring_items",
    "render_csv",
    "render_json",
    "render_markdown",
    "report_tables",
    "task_outcomes",
    "write_report",
]
