"""Overview: entry-share profiles (Figure 3), triage, efficiency, outcomes, delivery forms
(Figure 5), recurring items and judge cost, each number leading to the spans behind it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memuse_core import charts as TL  # the aggregate charts (the episode timeline is `timeline`)
from pages._shared import NOT_BUILT, fmt_num, fmt_pct, q, q_or_empty, scope, url, write_url

st.title("Overview")
runs = scope()
level = st.segmented_control("Group by", ["config", "run"], default="config", key="ov_level") or "config"
ov = q_or_empty("metrics.overview_frame", runs, level)
if ov is None or not len(ov) or "spans" not in ov or int(ov["spans"].sum()) == 0:
    st.info(f"No spans in this scope: {NOT_BUILT}.")
    st.stop()

ov = ov.copy()
ov["group"] = ov["config"] if level == "config" else ov["config"] + " · " + ov["run_id"].astype(str)
profiled = ov[ov["profiled_spans"] > 0]


def _drill_url(group_row: pd.Series, **kw: str) -> str:
    params = {"drill_config": group_row["config"]}
    if level == "run":
        params["drill_run"] = str(group_row["run_id"])
    params.update(kw)
    return url("", **params)


st.subheader("Six-axis entry-share profiles")
st.caption(
    "Mean share of each span's entries on each axis, over profiled spans (each span weighted "
    "equally; MemUse 3.5, Figure 3). Log scale from 0.001% (centre) to 100%; lower harm is better."
)
if len(profiled):
    profiles = {
        r["group"]: {a: (None if pd.isna(r[a]) else float(r[a])) for a in TL.AXES}
        for _, r in profiled.iterrows()
    }
    c1, c2 = st.columns([1, 1])
    c1.plotly_chart(TL.profile_radar(profiles), key="ov_radar")
    c2.plotly_chart(TL.profile_heatmap(profiles), key="ov_heatmap")
    means = pd.DataFrame({"group": profiled["group"], "profiled spans": profiled["profiled_spans"]})
    for a in TL.AXES:
        means[a] = [
            f"{_drill_url(r, drill_axis=a)}&pct={'—' if pd.isna(r[a]) else f'{100 * r[a]:.3g}'}"
            for _, r in profiled.iterrows()
        ]
    c2.dataframe(
        means,
        hide_index=True,
        key="ov_means",
        column_config={
            a: st.column_config.LinkColumn(f"{TL.AXIS_TITLES[a]} %", display_text=r"pct=(.*)$")
            for a in TL.AXES
        },
    )
    c2.caption("Each share links to the spans with a nonzero count on that axis.")
else:
    st.info(f"No profiled spans yet: {NOT_BUILT}.")

st.subheader("Triage, yields and token efficiency")
TRIAGE = ["positive", "negative", "unresolved", "neutral", "error", "unjudged", "empty", "unassessable"]


table = pd.DataFrame({"group": ov["group"]})
link_cols = {}
for t in TRIAGE:
    col = f"triage_{t}"
    if col in ov:
        table[t] = [f"{_drill_url(r, drill_outcome=t)}&n={int(r[col])}" for _, r in ov.iterrows()]
        link_cols[t] = st.column_config.LinkColumn(t, display_text=r"n=(\d+)$")
table["N triage"] = ov["n_triage"]
for t in ("positive", "negative", "unresolved", "neutral"):
    if f"rate_{t}" in ov:
        table[f"{t} rate"] = [fmt_pct(v) for v in ov[f"rate_{t}"]]
table["benefit /100 spans"] = [fmt_num(v) for v in ov["benefit_yield"]]
table["harm /100 spans"] = [fmt_num(v) for v in ov["harm_yield"]]
table["token efficiency (ben./M tok)"] = [fmt_num(v) for v in ov["token_efficiency"]]
table["est. delivered tokens"] = ov["est_tokens"]
st.dataframe(table, hide_index=True, column_config=link_cols, key="ov_triage")
st.caption(
    "Each count links to the spans behind it. Rates divide by N triage = positive + negative + "
    "neutral + unresolved; errors, unjudged, empty and unassessable spans are outside it (A.4.1)."
)

cov_cols = [
    c
    for c in ("coverage_profiled", "coverage_relevant", "coverage_beneficial", "coverage_harmful")
    if c in ov
]
if cov_cols:
    cov = pd.DataFrame({"group": ov["group"], "episodes": ov["episodes"]})
    for c in cov_cols:
        cov[c.replace("coverage_", "") + " episodes"] = [fmt_pct(v) for v in ov[c]]
    cov["recurring items"] = ov.get("recurring_items")
    cov["relevant entries from recurring items"] = [fmt_pct(v) for v in ov.get("relevant_from_recurring", [])]
    cov["relevance coverage without recurring"] = [
        fmt_pct(v) for v in ov.get("relevance_coverage_without_recurring", [])
    ]
    st.subheader("Episode coverage and recurring-item diagnostic")
    st.dataframe(cov, hide_index=True, key="ov_cov")
    st.caption("An item is recurring when delivered in at least max(2, 0.1·E) episodes of a run (A.4.2).")

# ---- Drill-down: spans behind a number ------------------------------------------------------
drill_outcome = st.query_params.get("drill_outcome")
drill_axis = st.query_params.get("drill_axis")
drill_form = st.query_params.get("drill_form")
drill_config = st.query_params.get("drill_config")
drill_run = st.query_params.get("drill_run")
with st.expander("Spans behind a number", expanded=bool(drill_outcome or drill_axis or drill_form)):
    groups = list(ov["group"])
    c1, c2, c3 = st.columns(3)
    outcome = c1.selectbox(
        "Outcome class",
        [None] + TRIAGE,
        index=(TRIAGE.index(drill_outcome) + 1) if drill_outcome in TRIAGE else 0,
        key="ov_drill_outcome",
    )
    axis = c2.selectbox(
        "Nonzero profile axis",
        [None] + list(TL.AXES),
        index=(list(TL.AXES).index(drill_axis) + 1) if drill_axis in TL.AXES else 0,
        key="ov_drill_axis",
    )
    cfgs = sorted(ov["config"].unique())
    config = c3.selectbox(
        "Configuration",
        [None] + cfgs,
        index=(cfgs.index(drill_config) + 1) if drill_config in cfgs else 0,
        key="ov_drill_config",
    )
    if outcome or axis or drill_form:
        sel_runs = runs
        rl = q("list_runs")
        if config:
            in_cfg = list(rl[rl["config"] == config]["run_id"])
            sel_runs = [r for r in (runs or in_cfg) if r in in_cfg]
        if drill_run:
            sel_runs = [drill_run]
        spans = q("spans_in_scope", sel_runs, outcome, axis, drill_form, 500)
        st.write(f"{len(spans)} spans" + (" (first 500)" if len(spans) >= 500 else ""))
        if len(spans):
            spans = spans.copy()
            spans.insert(0, "open", [url("span", span=s) for s in spans["span_id"]])
            st.dataframe(
                spans,
                hide_index=True,
                key="ov_drill_table",
                column_config={"open": st.column_config.LinkColumn("open", display_text="inspect")},
            )
        write_url(drill_outcome=outcome, drill_axis=axis, drill_config=config)
    _ = groups

# ---- Details: outcomes, delivery forms, cost (full report) ----------------------------------
st.subheader("Task outcomes, delivery forms and cost")
cfgs_all = sorted(ov["config"].unique())
baseline = st.selectbox(
    "Baseline configuration for resolve-rate differences (paired bootstrap)",
    [None] + cfgs_all,
    key="ov_baseline",
)
rep = q("metrics.build_report", runs, baseline)
rows, forms, costs = [], [], []
for cfg, cs in rep.configs.items():
    o = cs.outcome
    low = high = None
    if o.resolve_rate is not None and o.resolve_rate_sd is not None:
        low, high = o.resolve_rate - o.resolve_rate_sd, o.resolve_rate + o.resolve_rate_sd
    rows.append(
        {
            "group": cfg,
            "rate": o.resolve_rate,
            "low": low,
            "high": high,
            "runs": o.runs,
            "episodes": o.episodes,
            "diff vs baseline (pp)": None if o.diff is None else 100 * o.diff,
            "95% CI low (pp)": None if o.diff_ci_low is None else 100 * o.diff_ci_low,
            "95% CI high (pp)": None if o.diff_ci_high is None else 100 * o.diff_ci_high,
            "gains": o.gains,
            "losses": o.losses,
        }
    )
    for f in cs.forms:
        forms.append(
            {
                "group": cfg,
                "form": f.form,
                "route": f.route,
                "token_share": f.token_share,
                "beneficial_share": f.beneficial_share,
                "tokens": f.tokens,
                "beneficial": f.beneficial,
                "judged": f.judged,
                "acted_on": f.acted_on,
                "harmful": f.harmful,
            }
        )
    c = cs.cost
    costs.append(
        {
            "group": cfg,
            "agent $/episode": c.agent_cost_per_episode,
            "memory $/episode": c.memory_cost_per_episode,
            "agent tokens/episode": c.agent_tokens_per_episode,
            "judged spans": c.judged_spans,
            "judge attempts": c.judge_attempts,
            "judge calls": c.judge_calls,
            "judge cost $": c.judge_cost,
            "judge $/span": c.judge_cost_per_span,
            "judges": c.judges,
        }
    )
c1, c2 = st.columns([1, 1])
with c1:
    st.markdown("**Resolve rates** (bars: mean over runs; whiskers: ± sample SD across runs)")
    st.plotly_chart(TL.resolve_rate_chart(rows), key="ov_resolve")
    st.dataframe(pd.DataFrame(rows).drop(columns=["low", "high"]), hide_index=True, key="ov_outcomes")
with c2:
    st.markdown(
        "**Delivery forms**: share of estimated delivered tokens (circles) vs share of beneficial entries (diamonds)"
    )
    if forms:
        st.plotly_chart(TL.form_share_chart(forms), key="ov_forms")
        fdf = pd.DataFrame(forms)
        fdf.insert(
            0, "spans", [url("", drill_form=f, drill_config=g) for f, g in zip(fdf["form"], fdf["group"])]
        )
        st.dataframe(
            fdf,
            hide_index=True,
            key="ov_forms_table",
            column_config={
                "spans": st.column_config.LinkColumn("spans", display_text="spans"),
                "token_share": st.column_config.NumberColumn(format="percent"),
                "beneficial_share": st.column_config.NumberColumn(format="percent"),
            },
        )
    else:
        st.info(NOT_BUILT)
st.markdown("**Recorded cost and judge cost**")
st.dataframe(pd.DataFrame(costs), hide_index=True, key="ov_cost")
