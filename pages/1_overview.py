"""Overview: entry-share profiles (Figure 3), span outcome classes, yields and efficiency,
coverage, task outcomes, delivery forms (Figure 5) and cost, each number leading to the spans
behind it."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memuse_core.views import overview as ov_view
from memuse_core.views import report as report_view
from memuse_core.vocab import AXES, OUTCOME_CLASSES, TRIAGE_PRECEDENCE
from pages._shared import NOT_BUILT, cached, scope, url, write_url

st.title("Overview")
runs = scope()
level = st.segmented_control("Group by", ov_view.LEVELS, default="config", key="ov_level") or "config"
ov = cached(ov_view.overview, runs, level)
if not ov.spans:
    st.info(f"No spans in this scope: {NOT_BUILT}.")
    st.stop()


def _drill_url(group: ov_view.Group, **kw: str) -> str:
    return url("", drill_config=group.config, drill_run=group.run_id, **kw)


st.subheader("Six-axis entry-share profiles")
st.caption(
    "Mean share of each span's entries on each axis, over profiled spans (each span weighted "
    "equally; MemUse 3.5, Figure 3). Log scale from 0.001% (centre) to 100%; lower harm is better."
)
profiled = [g for g in ov.groups if g.stats.profiled_spans > 0]
if profiled:
    c1, c2 = st.columns([1, 1])
    c1.plotly_chart(ov.radar(), key="ov_radar")
    c2.plotly_chart(ov.heatmap(), key="ov_heatmap")
    means: dict[str, list[Any]] = {
        "group": [g.label for g in profiled],
        "profiled spans": [g.stats.profiled_spans for g in profiled],
    }
    for a in AXES:
        shares = [getattr(g.stats.profile, a) for g in profiled]
        means[a] = [
            f"{_drill_url(g, drill_axis=a)}&pct={'—' if v is None else f'{100 * v:.3g}'}"
            for g, v in zip(profiled, shares)
        ]
    c2.dataframe(
        means,
        hide_index=True,
        key="ov_means",
        column_config={
            a: st.column_config.LinkColumn(f"{ov_view.AXIS_TITLES[a]} %", display_text=r"pct=(.*)$")
            for a in AXES
        },
    )
    c2.caption("Each share links to the spans with a nonzero count on that axis.")
else:
    st.info(f"No profiled spans yet: {NOT_BUILT}.")

st.subheader("Outcome classes, yields and token efficiency")
table = ov.triage_table()
for c in OUTCOME_CLASSES:
    table[c] = [f"{_drill_url(g, drill_outcome=c)}&n={n}" for g, n in zip(ov.groups, table[c])]
st.dataframe(
    table,
    hide_index=True,
    key="ov_triage",
    column_config={c: st.column_config.LinkColumn(c, display_text=r"n=(\d+)$") for c in OUTCOME_CLASSES}
    | {f"{t} rate": st.column_config.NumberColumn(format="percent") for t in TRIAGE_PRECEDENCE},
)
st.caption(
    "Each count links to the spans behind it. Rates divide by N triage = positive + negative + "
    "neutral + unresolved; error, unjudged, empty and unassessable spans are outside it (A.4.1)."
)
st.subheader("Episode coverage and recurring-item diagnostic")
coverage = ov.coverage_table()
st.dataframe(
    coverage,
    hide_index=True,
    key="ov_cov",
    column_config={
        c: st.column_config.NumberColumn(format="percent")
        for c in coverage.columns
        if c.endswith(" episodes") or c.startswith("relevan")
    },
)
st.caption("An item is recurring when delivered in at least max(2, 0.1·E) episodes of a run (A.4.2).")

# ---- Drill-down: spans behind a number ------------------------------------------------------
qp = st.query_params
drill_form, drill_run = qp.get("drill_form"), qp.get("drill_run")
drill_outcome = next((c for c in OUTCOME_CLASSES if c == qp.get("drill_outcome")), None)
drill_axis = next((a for a in AXES if a == qp.get("drill_axis")), None)
with st.expander("Spans behind a number", expanded=bool(drill_outcome or drill_axis or drill_form)):
    c1, c2, c3 = st.columns(3)
    outcome = c1.selectbox(
        "Outcome class",
        [None, *OUTCOME_CLASSES],
        index=OUTCOME_CLASSES.index(drill_outcome) + 1 if drill_outcome else 0,
        key="ov_drill_outcome",
    )
    axis = c2.selectbox(
        "Nonzero profile axis",
        [None, *AXES],
        index=AXES.index(drill_axis) + 1 if drill_axis else 0,
        key="ov_drill_axis",
    )
    configs = ov.configs
    drill_config = qp.get("drill_config")
    config = c3.selectbox(
        "Configuration",
        [None, *configs],
        index=configs.index(drill_config) + 1 if drill_config in configs else 0,
        key="ov_drill_config",
    )
    if outcome or axis or drill_form:
        drill = cached(
            ov_view.drill_down,
            runs,
            config=config,
            run=drill_run,
            outcome=outcome,
            axis=axis,
            form=drill_form,
        )
        st.write(f"{len(drill.rows)} spans" + (f" (first {ov_view.DRILL_LIMIT})" if drill.truncated else ""))
        if len(drill.rows):
            spans = drill.rows.copy()
            spans.insert(0, "open", [url("span", span=s) for s in spans["span_id"]])
            st.dataframe(
                spans,
                hide_index=True,
                key="ov_drill_table",
                column_config={"open": st.column_config.LinkColumn("open", display_text="inspect")},
            )
        write_url(drill_outcome=outcome, drill_axis=axis, drill_config=config)

# ---- Task outcomes, delivery forms and cost (full report) ---------------------------------
st.subheader("Task outcomes, delivery forms and cost")
baseline = st.selectbox(
    "Baseline configuration for resolve-rate differences (paired bootstrap)",
    [None, *ov.configs],
    key="ov_baseline",
)
rep = cached(report_view.report, runs, baseline)
c1, c2 = st.columns([1, 1])
with c1:
    st.markdown("**Resolve rates** (bars: mean over runs; whiskers: ± sample SD across runs)")
    st.plotly_chart(rep.resolve_chart(), key="ov_resolve")
    st.dataframe(rep.outcome_table(), hide_index=True, key="ov_outcomes")
with c2:
    st.markdown(
        "**Delivery forms**: share of estimated delivered tokens (circles) vs share of beneficial entries (diamonds)"
    )
    if rep.forms:
        st.plotly_chart(rep.forms_chart(), key="ov_forms")
        forms = rep.form_table()
        forms.insert(
            0, "spans", [url("", drill_form=f, drill_config=g) for f, g in zip(forms["form"], forms["group"])]
        )
        st.dataframe(
            forms,
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
st.dataframe(rep.cost_table(), hide_index=True, key="ov_cost")
