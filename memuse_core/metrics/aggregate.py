"""Aggregate statistics of runs and configurations (MemUse 3.5-3.6, A.4, A.5.4, A.6.3-A.6.6).

The store queries (`memuse_core.store.metrics`) do the counting in DuckDB; this module turns their
per-group rows into the result models, dividing only where the denominator is non-empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..rules.aggregates import (
    entry_yield,
    ratio,
    recorded_total,
    token_efficiency,
    triage_denominator,
    triage_rates,
)
from ..store import Connection
from ..store import metrics as q
from ..vocab import AXES, OTHER_CLASSES, TRIAGE_PRECEDENCE
from . import outcomes as oc
from .models import (
    ConfigStats,
    Cost,
    Coverage,
    FormRow,
    GroupStats,
    Histories,
    ItemEffect,
    OriginSummary,
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

Key = tuple[str, str | None]
"""(config, run_id); run_id None for a configuration pooled over its runs."""

_UNC = {
    "u_accuracy": "uncontradicted",
    "u_novelty": "novelty_undetermined",
    "u_influence": "influence_undetermined",
    "u_effect": "effect_undetermined",
}


def _f(x: object) -> float | None:
    return None if x is None or pd.isna(x) else float(x)  # type: ignore[arg-type]


def _i(x: object) -> int:
    return 0 if x is None or pd.isna(x) else int(x)  # type: ignore[call-overload]


def _key(row: pd.Series) -> Key:
    run = row["run_id"]
    return (str(row["config"]), None if run is None or pd.isna(run) else str(run))


def _rows(df: pd.DataFrame) -> dict[Key, pd.Series]:
    # plain object columns: iterating arrow-backed frames row by row is slow
    df = df.astype(object)
    return {_key(r): r for _, r in df.iterrows()}


# ---- Profiles, triage, yields, efficiency (3.5, A.4.1-A.4.2) ----------------------------------
def _profile_part(g: GroupStats, r: pd.Series) -> None:
    g.spans = _i(r["spans"])
    g.profiled_spans = n_p = _i(r["profiled_spans"])
    g.profile = Profile(**{a: _f(r[a]) if n_p else None for a in AXES})
    g.uncertainty = Uncertainty(**{v: _f(r[k]) if n_p else None for k, v in _UNC.items()})
    counts: dict[str, int] = {a: _i(r[f"n_{a}"]) for a in AXES}
    counts |= {v: _i(r[f"n_{k}"]) for k, v in _UNC.items()}
    g.counts = ProfileCounts(entries=_i(r["n_entries_total"]), **counts)
    classes: dict[str, int] = {c: _i(r[f"t_{c}"]) for c in TRIAGE_PRECEDENCE + OTHER_CLASSES}
    g.triage = Triage(**classes)
    g.n_triage = triage_denominator(classes)
    g.triage_rates = TriageRates(**triage_rates(classes))
    g.auto_neutral = _i(r["auto_neutral"])
    g.est_tokens = _i(r["est_tokens"])
    g.est_tokens_by_class = {c: _i(r[f"tok_{c}"]) for c in TRIAGE_PRECEDENCE + OTHER_CLASSES}
    g.yields = Yields(benefit=entry_yield(counts["benefit"], n_p), harm=entry_yield(counts["harm"], n_p))
    g.token_efficiency = token_efficiency(counts["benefit"], g.est_tokens)


def _coverage_part(g: GroupStats, r: pd.Series) -> None:
    e = _i(r["episodes"])
    g.episodes = e
    g.coverage = Coverage(
        episodes=e,
        with_deliveries=_i(r["with_spans"]),
        profiled=ratio(_i(r["profiled"]), e),
        relevant=ratio(_i(r["relevant"]), e),
        beneficial=ratio(_i(r["beneficial"]), e),
        harmful=ratio(_i(r["harmful"]), e),
        n_profiled=_i(r["profiled"]),
        n_relevant=_i(r["relevant"]),
        n_beneficial=_i(r["beneficial"]),
        n_harmful=_i(r["harmful"]),
    )


def _recurring_part(g: GroupStats, r: pd.Series) -> None:
    rel, rec = _i(r["relevant_entries"]), _i(r["relevant_from_recurring"])
    g.recurring = Recurring(
        recurring_items=_i(r["recurring_items"]),
        relevant_entries=rel,
        relevant_from_recurring=rec,
        share_from_recurring=ratio(rec, rel),
        relevance_coverage_without=ratio(_i(r["episodes_relevant_wo_recurring"]), _i(r["episodes"])),
    )


def _use_part(g: GroupStats, r: pd.Series) -> None:
    d = {k: _i(r[k]) for k in r.index if k not in ("config", "run_id")}
    acted, unused = d["acted_on"], d["unused_relevant"]
    g.use = UseEffects(
        judged_entries=d["judged"],
        relevant=d["relevant"],
        acted_on=acted,
        improved=d["improved"],
        no_effect=d["no_effect"],
        harmed=d["harmed"],
        effect_undetermined=d["effect_undetermined"],
        improved_share=ratio(d["improved"], acted),
        no_effect_share=ratio(d["no_effect"], acted),
        harmed_share=ratio(d["harmed"], acted),
        effect_undetermined_share=ratio(d["effect_undetermined"], acted),
        anchored=d["anchored"],
        delayed=d["delayed"],
        delayed_5=d["delayed_5"],
        delayed_share=ratio(d["delayed"], d["anchored"]),
        delayed_5_share=ratio(d["delayed_5"], d["anchored"]),
        selected=d["selected"],
        referenced=d["referenced"],
        influence_undetermined=d["influence_undetermined"],
        ignored=d["ignored"],
        ignored_irrelevant=d["ignored_irrelevant"],
        unused_relevant=unused,
        unused_relevant_share=ratio(unused, d["relevant"]),
        unused_novel=d["unused_novel"],
        unused_confirming=d["unused_confirming"],
        unused_redundant=d["unused_redundant"],
        unused_novelty_undetermined=d["unused_novelty_undetermined"],
        unused_novel_share=ratio(d["unused_novel"], unused),
        episodes_acted_on=d["ep_acted"],
        episodes_beneficial=d["ep_beneficial"],
        episodes_beneficial_resolved=d["ep_beneficial_resolved"],
        episodes_beneficial_failed=d["ep_beneficial_failed"],
        episodes_harmful=d["ep_harmful"],
        episodes_harmful_resolved=d["ep_harmful_resolved"],
        episodes_harmful_failed=d["ep_harmful_failed"],
    )


def _forms(df: pd.DataFrame) -> list[FormRow]:
    tot_tok = float(df.tokens.sum())
    tot_ben = int(df.beneficial.sum())
    return [
        FormRow(
            form=r.form,
            route=r.route,
            tokens=float(r.tokens),
            token_share=ratio(r.tokens, tot_tok),
            beneficial=int(r.beneficial),
            beneficial_share=ratio(r.beneficial, tot_ben),
            judged=int(r.judged),
            relevant=int(r.relevant),
            acted_on=int(r.acted_on),
            selected=int(r.selected),
            harmful=int(r.harmful),
            relevant_rate=ratio(r.relevant, r.judged),
            acted_on_rate=ratio(r.acted_on, r.judged),
            harmful_rate=ratio(r.harmful, r.judged),
        )
        for r in df.itertuples()
    ]


def origin_summary(df: pd.DataFrame) -> OriginSummary:
    """Summarise `effect_origins` rows of one effect (Table 12)."""
    if len(df) == 0:
        return OriginSummary()
    traced = df[df.origin == "earlier_same_run"]
    gaps = traced.gap.dropna()
    known = traced.origin_resolved.dropna()
    failed = int((~known.astype(bool)).sum())
    return OriginSummary(
        entries=len(df),
        earlier_same_run=len(traced),
        same_repo=int(traced.same_repo.astype(bool).sum()),
        other_repo=int((~traced.same_repo.astype(bool)).sum()),
        same_episode=int((df.origin == "same_episode").sum()),
        other=int((df.origin == "other").sum()),
        unobserved=int((df.origin == "unobserved").sum()),
        gap_median=float(np.median(gaps)) if len(gaps) else None,
        gap_min=int(gaps.min()) if len(gaps) else None,
        gap_max=int(gaps.max()) if len(gaps) else None,
        source_resolved=int(known.astype(bool).sum()),
        source_failed=failed,
        source_no_result=int(traced.origin_resolved.isna().sum()),
        source_failed_share=ratio(failed, len(known)),
    )


def histories(origins: pd.DataFrame, items: pd.DataFrame | None = None) -> Histories:
    """Histories of one group from its `effect_origins` rows (and, pooled, its `item_effects`)."""
    h = Histories(
        benefit=origin_summary(origins[origins.effect == "benefit"]),
        harm=origin_summary(origins[origins.effect == "harm"]),
    )
    ben = origins[origins.effect == "benefit"]
    harm = origins[origins.effect == "harm"]
    h.items_beneficial = int(ben[["namespace", "item_id"]].drop_duplicates().shape[0])
    h.items_harmful = int(harm[["namespace", "item_id"]].drop_duplicates().shape[0])
    runs_b = ben.groupby(["namespace", "item_id"]).run_id.nunique()
    h.items_helped_several_runs = int((runs_b >= 2).sum())
    runs_h = harm.groupby(["namespace", "item_id"]).run_id.nunique()
    h.items_harmed_several_runs = sorted(f"{ns}/{it}" for (ns, it), n in runs_h.items() if n >= 2)
    return h


def _cost(g: GroupStats, c: pd.Series | None, j: pd.Series | None) -> None:
    e = g.episodes
    cost = Cost(episodes=e)
    if c is not None:
        for k in Cost.model_fields:
            if k in c.index:
                setattr(cost, k, _f(c[k]) if k.endswith("_cost") else _i(c[k]))

        def per_episode(total: float, calls: int, unknown: int) -> float | None:
            known = recorded_total(total, calls, unknown)
            return None if known is None else ratio(known, e)

        cost.agent_cost_per_episode = per_episode(cost.agent_cost, cost.agent_calls, cost.agent_cost_unknown)
        cost.memory_cost_per_episode = per_episode(
            cost.memory_cost, cost.memory_calls, cost.memory_cost_unknown
        )
        cost.agent_tokens_per_episode = per_episode(
            cost.agent_input + cost.agent_output, cost.agent_calls, cost.agent_usage_unknown
        )
        cost.memory_tokens_per_episode = per_episode(
            cost.memory_input + cost.memory_output, cost.memory_calls, cost.memory_usage_unknown
        )
    if j is not None:
        cost.judged_spans = _i(j["judged_spans"])
        cost.judge_attempts = _i(j["attempts"])
        cost.judge_calls = _i(j["judge_calls"])
        cost.judge_input = _i(j["judge_input"])
        cost.judge_output = _i(j["judge_output"])
        cost.judge_cost_unknown = _i(j["judge_cost_unknown"])
        cost.judge_cost = recorded_total(
            _f(j["judge_cost"]) or 0.0, cost.judge_attempts, cost.judge_cost_unknown
        )
        cost.judge_cost_per_span = (
            None if cost.judge_cost is None else ratio(cost.judge_cost, cost.judged_spans)
        )
        cost.judges = None if pd.isna(j["judges"]) else str(j["judges"])
    g.cost = cost


def group_stats(
    con: Connection,
    runs: Sequence[str] | None = None,
    level: q.Level = "config",
    *,
    details: bool = True,
    facts: q.Facts | None = None,
    judge: str | None = None,
) -> dict[Key, GroupStats]:
    """Aggregates per configuration (`level="config"`), per run (`"run"`) or both (`"both"`,
    keys (config, None) and (config, run)), from the verdicts of one judge: `facts.judge`, else
    `judge`, else the store's default (`store.judging.resolve_judge`).

    With `details=False` only the overview is computed (profiles, triage, yields, efficiency,
    coverage, recurring items): this is what the app's overview page needs."""
    if facts is None and details:
        # many queries share the same building blocks: materialise them once
        with q.facts(con, runs, judge) as f:
            return group_stats(con, runs, level, details=details, facts=f)
    kw: dict[str, Any] = {"facts": facts, "judge": facts.judge if facts is not None else judge}
    prof = cov = rec = _rows(q.overview(con, runs, level, **kw))
    out: dict[Key, GroupStats] = {}
    for k, r in cov.items():
        g = GroupStats()
        _coverage_part(g, r)
        if k in prof:
            _profile_part(g, prof[k])
        if k in rec:
            _recurring_part(g, rec[k])
        out[k] = g
    if not details:
        return out
    use = _rows(q.use_effects(con, runs, level, **kw))
    forms = q.delivery_forms(con, runs, level, **kw)
    costs = _rows(q.group_costs(con, runs, level, **kw))
    jcost = _rows(q.judge_costs(con, runs, level, **kw))
    origins = q.effect_origins(con, runs, **kw)
    run_out = q.run_outcomes(con, runs, **kw)
    for k, g in out.items():
        if k in use:
            _use_part(g, use[k])
        cfg, run = k
        fsel = forms[(forms.config == cfg) & (forms.run_id.isna() if run is None else forms.run_id == run)]
        g.forms = _forms(fsel)
        osel = origins[origins.config == cfg] if run is None else origins[origins.run_id == run]
        g.histories = histories(osel)
        _cost(g, costs.get(k), jcost.get(k))
        rsel = run_out[run_out.config == cfg] if run is None else run_out[run_out.run_id == run]
        if run is None:
            g.outcome = oc.config_outcome(rsel)
        elif len(rsel):
            g.outcome = oc.run_outcome(next(rsel.itertuples()))
    return out


def build_report(
    con: Connection,
    runs: Sequence[str] | None = None,
    baseline: str | None = None,
    *,
    replicates: int = oc.BOOTSTRAP_REPLICATES,
    seed: int = oc.DEFAULT_SEED,
    judge: str | None = None,
) -> Report:
    """The full report: every configuration pooled over its selected runs, with each run nested,
    and the baseline comparison of task outcomes (A.5.4) when `baseline` names a configuration.
    Every table reads the verdicts of one judge (`judge`, default `store.judging.resolve_judge`),
    named in `Report.judge`."""
    with q.facts(con, runs, judge) as f:
        chosen = f.judge
        both = group_stats(con, runs, "both", facts=f)
        outcomes = q.task_outcomes(con, runs, facts=f)
        pairs = q.run_pair_changes(con, runs, facts=f)
        items = q.item_effects(con, runs, facts=f)
    pooled = {k: g for k, g in both.items() if k[1] is None}
    per_run = {k: g for k, g in both.items() if k[1] is not None}
    configs = sorted({c for c, _ in pooled})
    if baseline is not None and baseline not in configs:
        raise ValueError(
            f"baseline configuration {baseline!r} is not in the selected runs "
            f"(configurations: {', '.join(configs) or 'none'})"
        )
    rep = Report(
        baseline=baseline,
        bootstrap_replicates=replicates,
        seed=seed,
        runs=list(runs) if runs is not None else None,
        judge=chosen,
    )
    for cfg in configs:
        cs = ConfigStats(**pooled[(cfg, None)].model_dump())
        oc.fill_comparison(cs.outcome, outcomes, pairs, cfg, baseline, replicates, seed)
        cs.runs = {
            run: g
            for (c, run), g in sorted(per_run.items(), key=lambda kv: str(kv[0][1]))
            if c == cfg and run is not None
        }
        harm = items[(items.config == cfg) & (items.harmful > 0)]
        cs.harmful_items = [
            ItemEffect(
                namespace=r.namespace,
                item_id=r.item_id,
                acted_on=int(r.acted_on),
                beneficial=int(r.beneficial),
                harmful=int(r.harmful),
                runs_beneficial=int(r.runs_beneficial),
                runs_harmful=int(r.runs_harmful),
                harmed_tasks=[str(t) for t in (r.harmed_tasks if r.harmed_tasks is not None else [])],
            )
            for r in harm.itertuples()
        ]
        rep.configs[cfg] = cs
    return rep
