"""The report's tables (MemUse Tables 2, 7, 9, 11, 12 and the cost table) as DataFrames.

Percentages in the tables are shares x 100; undefined values stay None (printed as "—" by
`metrics.render`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import pandas as pd

from ..rules.aggregates import recorded_total
from .models import GroupStats, Report

By = Literal["config", "run"]
UNDEFINED = "—"


def _pct(x: float | None) -> float | None:
    return None if x is None else x * 100


def _groups(rep: Report, by: By) -> Iterator[tuple[str, str | None, GroupStats]]:
    for cfg, cs in rep.configs.items():
        if by == "config":
            yield cfg, None, cs
        else:
            for run, g in cs.runs.items():
                yield cfg, run, g


def _frame(rows: list[dict], by: By) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    if by == "config" and "run" in df.columns:
        df = df.drop(columns=["run"])
    return df


def outcomes_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Task outcomes: resolve rate mean ± sample sd across runs, difference from the baseline with
    its paired-bootstrap 95% interval, mean gains and losses over run pairs (Table 2, A.5.4)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        o = g.outcome
        rows.append(
            {
                "config": cfg,
                "run": run,
                "runs": o.runs,
                "episodes": o.episodes,
                "resolved %": _pct(o.resolve_rate),
                "sd (pp)": _pct(o.resolve_rate_sd),
                "no result": o.no_result,
                f"Δ vs {rep.baseline or 'baseline'} (pp)": _pct(o.diff),
                "95% CI low": _pct(o.diff_ci_low),
                "95% CI high": _pct(o.diff_ci_high),
                "gains": o.gains,
                "losses": o.losses,
                "run pairs": o.run_pairs,
            }
        )
    return _frame(rows, by)


def profiles_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Six-axis profiles (mean shares over profiled spans), yields and token efficiency (Table 7)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        p = g.profile
        rows.append(
            {
                "config": cfg,
                "run": run,
                "profiled spans": g.profiled_spans,
                "relevance %": _pct(p.relevance),
                "corroboration %": _pct(p.corroboration),
                "information gain %": _pct(p.information_gain),
                "acted on %": _pct(p.acted_on),
                "benefit %": _pct(p.benefit),
                "harm %": _pct(p.harm),
                "benefit yield /100 spans": g.yields.benefit,
                "harm yield /100 spans": g.yields.harm,
                "token efficiency /M tokens": g.token_efficiency,
                "delivered tokens (est.)": g.est_tokens,
            }
        )
    return _frame(rows, by)


def uncertainty_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """The four uncertainty shares and the summed counts over profiled spans (A.4.2)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        u, c = g.uncertainty, g.counts
        rows.append(
            {
                "config": cfg,
                "run": run,
                "uncontradicted %": _pct(u.uncontradicted),
                "novelty undetermined %": _pct(u.novelty_undetermined),
                "influence undetermined %": _pct(u.influence_undetermined),
                "effect undetermined %": _pct(u.effect_undetermined),
                "entries": c.entries,
                "relevant": c.relevance,
                "corroborated": c.corroboration,
                "information gain": c.information_gain,
                "acted on": c.acted_on,
                "beneficial": c.benefit,
                "harmful": c.harm,
            }
        )
    return _frame(rows, by)


def triage_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Triage counts and rates over N_triage; error, unjudged, empty and unassessable spans apart
    (A.4.1, Eq. 4)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        t, r = g.triage, g.triage_rates
        rows.append(
            {
                "config": cfg,
                "run": run,
                "N_triage": g.n_triage,
                "positive": t.positive,
                "negative": t.negative,
                "neutral": t.neutral,
                "of which auto-neutral": g.auto_neutral,
                "unresolved": t.unresolved,
                "positive %": _pct(r.positive),
                "negative %": _pct(r.negative),
                "neutral %": _pct(r.neutral),
                "unresolved %": _pct(r.unresolved),
                "error": t.error,
                "unjudged": t.unjudged,
                "empty": t.empty,
                "unassessable": t.unassessable,
            }
        )
    return _frame(rows, by)


def coverage_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Episode coverage over all selected episodes and the recurring-item diagnostic (A.4.2)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        c, rc = g.coverage, g.recurring
        rows.append(
            {
                "config": cfg,
                "run": run,
                "episodes (E)": c.episodes,
                "with deliveries": c.with_deliveries,
                "profiled %": _pct(c.profiled),
                "relevant %": _pct(c.relevant),
                "beneficial %": _pct(c.beneficial),
                "harmful %": _pct(c.harmful),
                "recurring items": rc.recurring_items,
                "relevant entries from recurring %": _pct(rc.share_from_recurring),
                "relevant % without recurring": _pct(rc.relevance_coverage_without),
            }
        )
    return _frame(rows, by)


def forms_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Delivery forms by route: token and beneficial-entry shares, entry rates (Table 11)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        for f in g.forms:
            rows.append(
                {
                    "config": cfg,
                    "run": run,
                    "form": f.form,
                    "route": f.route,
                    "tokens %": _pct(f.token_share),
                    "beneficial %": _pct(f.beneficial_share),
                    "relevant rate %": _pct(f.relevant_rate),
                    "acted on rate %": _pct(f.acted_on_rate),
                    "harmful rate %": _pct(f.harmful_rate),
                    "judged entries": f.judged,
                    "selected": f.selected,
                    "beneficial": f.beneficial,
                    "harmful": f.harmful,
                }
            )
    return _frame(rows, by)


def use_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Effects conditional on acted-on entries, delayed use, unused relevant entries by novelty and
    episode outcomes (Table 9)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        u = g.use
        rows.append(
            {
                "config": cfg,
                "run": run,
                "judged entries": u.judged_entries,
                "acted on": u.acted_on,
                "improved %": _pct(u.improved_share),
                "no effect %": _pct(u.no_effect_share),
                "harmed %": _pct(u.harmed_share),
                "undetermined %": _pct(u.effect_undetermined_share),
                "later than first step %": _pct(u.delayed_share),
                "≥5 steps later %": _pct(u.delayed_5_share),
                "relevant": u.relevant,
                "unused relevant": u.unused_relevant,
                "unused of relevant %": _pct(u.unused_relevant_share),
                "unused novel": u.unused_novel,
                "unused confirming": u.unused_confirming,
                "unused redundant": u.unused_redundant,
                "unused novelty undetermined": u.unused_novelty_undetermined,
                "ignored irrelevant": u.ignored_irrelevant,
                "episodes beneficial: resolved": u.episodes_beneficial_resolved,
                "episodes beneficial: failed": u.episodes_beneficial_failed,
                "episodes harmful: resolved": u.episodes_harmful_resolved,
                "episodes harmful: failed": u.episodes_harmful_failed,
            }
        )
    return _frame(rows, by)


def histories_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Origins of beneficial and harmful entries (Table 12, A.6.6)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        for effect, o in (("benefit", g.histories.benefit), ("harm", g.histories.harm)):
            rows.append(
                {
                    "config": cfg,
                    "run": run,
                    "effect": effect,
                    "entries": o.entries,
                    "earlier episode, same run": o.earlier_same_run,
                    "of which other repository": o.other_repo,
                    "same episode": o.same_episode,
                    "other run / later": o.other,
                    "unobserved origin": o.unobserved,
                    "median gap (tasks)": o.gap_median,
                    "min gap": o.gap_min,
                    "max gap": o.gap_max,
                    "source resolved": o.source_resolved,
                    "source failed": o.source_failed,
                    "source no result": o.source_no_result,
                    "source failed %": _pct(o.source_failed_share),
                }
            )
    return _frame(rows, by)


def harmful_items_table(rep: Report) -> pd.DataFrame:
    """Items with harmful entries, with the number of runs in which they harmed (A.6.6)."""
    rows = []
    for cfg, cs in rep.configs.items():
        for it in cs.harmful_items:
            rows.append(
                {
                    "config": cfg,
                    "item": f"{it.namespace}/{it.item_id}",
                    "harmful": it.harmful,
                    "beneficial": it.beneficial,
                    "acted on": it.acted_on,
                    "runs harmed": it.runs_harmful,
                    "runs helped": it.runs_beneficial,
                    "harmed tasks": ", ".join(it.harmed_tasks),
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "config",
            "item",
            "harmful",
            "beneficial",
            "acted on",
            "runs harmed",
            "runs helped",
            "harmed tasks",
        ],
    )


def cost_table(rep: Report, by: By = "config") -> pd.DataFrame:
    """Recorded tokens and cost per episode for agent and memory-system calls; judge cost per
    judged span (A.4.4)."""
    rows = []
    for cfg, run, g in _groups(rep, by):
        c = g.cost
        e = c.episodes or None

        def per(x: float, calls: int = 0, unknown: int = 0, e: int | None = e) -> float | None:
            known = recorded_total(x, calls, unknown)
            return None if e is None or known is None else known / e

        rows.append(
            {
                "config": cfg,
                "run": run,
                "episodes": c.episodes,
                "agent calls /ep": per(c.agent_calls),
                "agent input /ep": per(c.agent_input, c.agent_calls, c.agent_usage_unknown),
                "agent cached /ep": per(c.agent_cached, c.agent_calls, c.agent_usage_unknown),
                "agent output /ep": per(c.agent_output, c.agent_calls, c.agent_usage_unknown),
                "agent reasoning /ep": per(c.agent_reasoning, c.agent_calls, c.agent_usage_unknown),
                "agent $ /ep": c.agent_cost_per_episode,
                "memory calls /ep": per(c.memory_calls),
                "memory input /ep": per(c.memory_input, c.memory_calls, c.memory_usage_unknown),
                "memory cached /ep": per(c.memory_cached, c.memory_calls, c.memory_usage_unknown),
                "memory output /ep": per(c.memory_output, c.memory_calls, c.memory_usage_unknown),
                "memory reasoning /ep": per(c.memory_reasoning, c.memory_calls, c.memory_usage_unknown),
                "memory $ /ep": c.memory_cost_per_episode,
                "calls without cost": c.agent_cost_unknown + c.memory_cost_unknown,
                "calls without usage": c.agent_usage_unknown + c.memory_usage_unknown,
                "judged spans": c.judged_spans,
                "judge attempts": c.judge_attempts,
                "judge $ /span": c.judge_cost_per_span,
                "judge": c.judges,
            }
        )
    return _frame(rows, by)


TABLES = {
    "outcomes": ("Task outcomes (A.5.4)", outcomes_table),
    "profiles": ("Memory profiles, yields and token efficiency (3.5, A.4.2)", profiles_table),
    "uncertainty": ("Uncertainty shares and summed counts (A.4.2)", uncertainty_table),
    "triage": ("Span triage (A.4.1)", triage_table),
    "coverage": ("Episode coverage and recurring items (A.4.2)", coverage_table),
    "forms": ("Delivery forms (A.6.5, Table 11)", forms_table),
    "use": ("Use and observed effects (A.6.3, Table 9)", use_table),
    "histories": ("Memory histories (A.6.6, Table 12)", histories_table),
    "cost": ("Recorded usage and cost (A.4.4)", cost_table),
}
"""Report tables in print order: name -> (title, builder)."""


def report_tables(rep: Report, by: By = "config") -> dict[str, pd.DataFrame]:
    """Every table of the report, keyed by name (see `TABLES`), plus `harmful_items`."""
    out = {name: fn(rep, by) for name, (_, fn) in TABLES.items()}
    out["harmful_items"] = harmful_items_table(rep)
    return out
