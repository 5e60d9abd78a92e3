"""Overview: entry-share profiles (Figure 3), span outcome classes, yields and efficiency,
coverage, task outcomes, delivery forms (Figure 5) and cost, each number leading to the spans
behind it."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memuse_core.views import overview as ov_view
from memuse_core.views import report as report_view
from memuse_core.views.common import display_name, display_table, formatted, judge_title
from memuse_core.vocab import AXES, OUTCOME_CLASSES, TRIAGE_PRECEDENCE
from memuse_core.wording import plural
from pages._shared import (
    NOT_BUILT,
    cached,
    formatted_grid,
    from_url,
    md_escape,
    scope,
    text_columns,
    url,
    view_judge,
    write_url,
)
from pages._widgets import lazy_expander

REPORT_KEY = "ov_report"  # session key of the report section's expander (open = drawn)

st.title("Overview")
runs = scope()
judge = view_judge()  # every number below reads this one judge's verdicts (sidebar "Verdicts of")
from_url("level", "ov_level", options=ov_view.LEVELS)
level = st.segmented_control("Group by", ov_view.LEVELS, default="config", key="ov_level") or "config"
ov = cached(ov_view.overview, runs, level, judge)
if not ov.spans:
    st.info(ov.empty_note())
    for why in ov.unprofiled():
        st.caption(md_escape(why))
    st.stop()


def _drill_url(group: ov_view.Group, **kw: str) -> str:
    return url("", drill_config=group.config, drill_run=group.run_id, **kw)


st.subheader(ov.title("Six-axis entry-share profiles"))
st.caption(
    "Mean share of each span's entries on each axis, over profiled spans (each span weighted "
    "equally; MemUse 3.5, Figure 3). Log scale from 0.001% (centre) to 100%; lower harm is better."
)
profiled = [g for g in ov.groups if g.stats.profiled_spans > 0]
if profiled:
    c1, c2 = st.columns([1, 1])
    with c1:
        st.html(ov.radar())  # escaped HTML: no Plotly on the Overview's first screen (issue 17)
    with c2:
        st.html(ov.heatmap())
    means: dict[str, list[Any]] = {
        "group": [display_name(g.label) for g in profiled],
        "profiled spans": [f"{g.stats.profiled_spans:,}" for g in profiled],
    }
    for a in AXES:
        shares = [getattr(g.stats.profile, a) for g in profiled]
        means[a] = [
            f"{_drill_url(g, drill_axis=a)}&pct={'—' if v is None else f'{100 * v:.3g}'}"
            for g, v in zip(profiled, shares)
        ]
    st.dataframe(
        means,
        hide_index=True,
        key="ov_means",
        column_config={
            a: st.column_config.LinkColumn(f"{ov_view.AXIS_TITLES[a]} %", display_text=r"pct=(.*)$")
            for a in AXES
        },
    )
    st.caption("Each share links to the spans with a nonzero count on that axis.")
else:
    st.info(f"No profiled spans yet: {NOT_BUILT}.")
for why in ov.unprofiled():
    st.caption(md_escape(why))

st.subheader(ov.title("Outcome classes"))
classes = formatted(ov.class_table(), {"spans": "count", "profiled spans": "count", "N triage": "count"})
for c in OUTCOME_CLASSES:
    classes[c] = [f"{_drill_url(g, drill_outcome=c)}&n={n}" for g, n in zip(ov.groups, ov.class_table()[c])]
st.dataframe(
    classes,
    hide_index=True,
    key="ov_classes",
    column_config={c: st.column_config.LinkColumn(c, display_text=r"n=(\d+)$") for c in OUTCOME_CLASSES}
    | text_columns(["spans", "profiled spans", "N triage"]),
)
st.caption(
    "Each count links to the spans behind it. N triage = positive + negative + neutral + "
    "unresolved; error, unjudged, empty and unassessable spans are outside it (A.4.1)."
)
st.subheader(ov.title("Triage rates, yields and token efficiency"))
formatted_grid(ov.rates_table(), ov_view.RATE_FORMATS, key="ov_rates")
st.caption(
    f"Rates divide by N triage ({', '.join(TRIAGE_PRECEDENCE)}); yields are per 100 spans; token "
    "efficiency is beneficial entries per million estimated delivered tokens (A.4.1, A.4.4)."
)
st.subheader(ov.title("Episode coverage and recurring-item diagnostic"))
formatted_grid(ov.coverage_table(), ov_view.COVERAGE_FORMATS, key="ov_cov")
st.caption("An item is recurring when delivered in at least max(2, 0.1·E) episodes of a run (A.4.2).")

# ---- Drill-down: spans behind a number ------------------------------------------------------
qp = st.query_params
drill_form, drill_run = qp.get("drill_form"), qp.get("drill_run")
from_url("drill_outcome", "ov_drill_outcome", options=OUTCOME_CLASSES)
from_url("drill_axis", "ov_drill_axis", options=AXES)
from_url("drill_config", "ov_drill_config", options=ov.configs)
drilling = bool(qp.get("drill_outcome") or qp.get("drill_axis") or drill_form)
with st.expander(ov.title("Spans behind a number"), expanded=drilling):
    c1, c2, c3 = st.columns(3)
    outcome = c1.selectbox("Outcome class", [None, *OUTCOME_CLASSES], key="ov_drill_outcome")
    axis = c2.selectbox("Nonzero profile axis", [None, *AXES], key="ov_drill_axis")
    config = c3.selectbox(
        "Configuration",
        [None, *ov.configs],
        key="ov_drill_config",
        format_func=lambda c: "all" if c is None else display_name(c),
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
            judge=judge,
        )
        st.write(
            f"{plural(len(drill.rows), 'span')}"
            + (f" (first {ov_view.DRILL_LIMIT})" if drill.truncated else "")
        )
        if len(drill.rows):
            spans = drill.rows.copy()
            spans.insert(0, "open", [url("span", span=s) for s in spans["span_id"]])
            st.dataframe(
                display_table(spans),
                hide_index=True,
                key="ov_drill_table",
                column_config={"open": st.column_config.LinkColumn("open", display_text="inspect")},
            )
    write_url(drill_outcome=outcome, drill_axis=axis, drill_config=config)

# ---- Task outcomes, delivery forms and cost (full report) ---------------------------------
# Drawn only while its expander is open (a link with ?report=1 or a baseline opens it): its two
# charts and three tables are below the fold, and drawing them on every visit cost the browser
# time after the page had settled, which landed in the next page's time (issue 17).
write_url(level=None if level == "config" else level)
from_url("report", REPORT_KEY, cast=lambda v: v == "1")
if st.query_params.get("baseline") and REPORT_KEY not in st.session_state:
    st.session_state[REPORT_KEY] = True
if "ov_baseline" in st.session_state:  # keep the pick while the section is closed
    st.session_state["ov_baseline"] = st.session_state["ov_baseline"]
with lazy_expander("Task outcomes, delivery forms and cost", REPORT_KEY) as report_shown:
    if report_shown:
        from_url("baseline", "ov_baseline", options=ov.configs)
        baseline = st.selectbox(
            "Baseline configuration for resolve-rate differences (paired bootstrap)",
            [None, *ov.configs],
            key="ov_baseline",
            format_func=lambda c: "none" if c is None else display_name(c),
        )
        rep = cached(report_view.report, runs, baseline, judge=judge)
        st.markdown("**Resolve rates** (bars: mean over runs; whiskers: ± sample SD across runs)")
        c1, c2 = st.columns([1, 1])
        c1.plotly_chart(rep.resolve_chart(), key="ov_resolve")
        c2.dataframe(
            formatted(rep.outcome_table(), report_view.OUTCOME_FORMATS),
            hide_index=True,
            key="ov_outcomes",
            column_config=text_columns(report_view.OUTCOME_FORMATS),
        )
        st.markdown(
            f"**{judge_title('Delivery forms', rep.judge)}**: share of estimated delivered tokens (circles) vs share of "
            "beneficial entries (diamonds)"
        )
        if rep.forms:
            st.plotly_chart(rep.forms_chart(), key="ov_forms")
            forms = formatted(rep.form_table(), report_view.FORM_FORMATS)
            forms.insert(
                0,
                "spans",
                [url("", drill_form=f.form, drill_config=f.group) for f in rep.forms],
            )
            st.dataframe(
                forms,
                hide_index=True,
                key="ov_forms_table",
                column_config={"spans": st.column_config.LinkColumn("spans", display_text="spans")}
                | text_columns(report_view.FORM_FORMATS),
            )
        else:
            st.info(NOT_BUILT)
        st.markdown(f"**{judge_title('Recorded cost and judge cost', rep.judge)}**")
        formatted_grid(rep.cost_table(), report_view.COST_FORMATS, key="ov_cost")
        write_url(report="1", baseline=baseline)
if not report_shown:  # a baseline in the URL opens the section: closed, the URL holds neither
    write_url(report=None, baseline=None)
