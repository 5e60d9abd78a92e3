"""Compare two configurations or runs: overlaid profile radars, outcome-class and cost differences,
paired per-task outcomes (gained and lost tasks and whether any entry was acted on in them, MemUse
4.3), delivery-form differences, and one task's two episodes one above the other."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import common
from memuse_core.views import compare as cmp_view
from memuse_core.views.overview import LEVELS
from pages._shared import NOT_BUILT, cached, md_code, set_sel, url
from pages._widgets import render_timeline

st.title("Compare")
level = st.segmented_control("Compare", LEVELS, default="config", key="cmp_level") or "config"
options = cmp_view.options(cached(common.runs), level)
if len(options) < 2:
    st.info("Need at least two configurations or runs to compare.")
    st.stop()
qp = st.query_params
for side, default in (("a", options[0]), ("b", options[1])):
    v = qp.get(side)
    if v in options and st.session_state.get(f"_cmp_seen_{side}") != v:
        st.session_state[f"cmp_{side}"] = v
        st.session_state[f"_cmp_seen_{side}"] = v
    if st.session_state.get(f"cmp_{side}") not in options:
        st.session_state[f"cmp_{side}"] = default
c1, c2 = st.columns(2)
a = c1.selectbox("A", options, key="cmp_a")
b = c2.selectbox("B", options, key="cmp_b")
qp["a"], qp["b"] = a, b
cmp = cached(cmp_view.compare, level, a, b)

st.subheader("Profiles (log scale 0.001%–100%)")
if cmp.built:
    c1, c2 = st.columns(2)
    c1.plotly_chart(cmp.radar(), key="cmp_radar")
    c2.plotly_chart(cmp.heatmap(), key="cmp_heatmap")
    st.subheader("Outcome classes, yields and efficiency")
    st.dataframe(cmp.metrics, hide_index=True, key="cmp_diff")
else:
    st.info(f"Profiles: {NOT_BUILT}.")

st.subheader("Cost and delivery forms")
st.dataframe(cmp.report.cost_table(), hide_index=True, key="cmp_cost")
if cmp.report.forms:
    st.plotly_chart(cmp.report.forms_chart(), key="cmp_forms")
    st.dataframe(cmp.form_pivot(), hide_index=True, key="cmp_forms_table")

st.subheader("Paired per-task outcomes")
if not len(cmp.pairs):
    st.info("The two sides share no tasks.")
    st.stop()
gained, lost = cmp.count("gained"), cmp.count("lost")
m1, m2, m3, m4 = st.columns(4)
m1.metric("Tasks paired", len(cmp.pairs))
m2.metric("Gained by B", gained, help="B resolves the task more often than A.")
m3.metric("Lost by B", lost)
m4.metric(
    "Changed tasks with an acted-on entry in B",
    f"{cmp.count('gained', 'acted_b') + cmp.count('lost', 'acted_b')} / {gained + lost}",
)
st.caption(
    "As in MemUse 4.3: most outcome changes lack an acted-on entry in the record. "
    f"Gains with beneficial use: {cmp.count('gained', 'beneficial_b')}; losses with harmful use: "
    f"{cmp.count('lost', 'harmful_b')}."
)
which = st.segmented_control("Show", cmp_view.PAIR_FILTERS, default="changed", key="cmp_show") or "changed"
view = cmp.listed(which).copy()
view.insert(0, "A", [url("timeline", episode=e) for e in view["episode_a"]])
view.insert(1, "B", [url("timeline", episode=e) for e in view["episode_b"]])
ev = st.dataframe(
    view,
    hide_index=True,
    key="cmp_pairs",
    on_select="rerun",
    selection_mode="single-row",
    column_config={
        "A": st.column_config.LinkColumn("A", display_text="open"),
        "B": st.column_config.LinkColumn("B", display_text="open"),
        "resolved_a": st.column_config.NumberColumn(format="%.2f"),
        "resolved_b": st.column_config.NumberColumn(format="%.2f"),
    },
)

tasks = list(cmp.pairs["task_id"])
v = qp.get("task")
if v in tasks and st.session_state.get("_cmp_seen_task") != v:
    st.session_state["cmp_task"] = v
    st.session_state["_cmp_seen_task"] = v
if ev is not None and ev.selection.rows:
    st.session_state["cmp_task"] = view.iloc[ev.selection.rows[0]]["task_id"]
task = st.selectbox("Open a task's two episodes", [None, *tasks], key="cmp_task")
pair = cmp.episodes_of(task) if task else None
if task and pair:
    qp["task"] = task
    for side, eid in zip((a, b), pair):
        head = cached(common.episode_header, eid)
        outcome, steps = (head.outcome, head.n_steps) if head else ("?", "?")
        st.markdown(f"**{md_code(side)}** · {md_code(eid)} · {outcome} · {steps} steps")
        picked = render_timeline(eid, key=f"cmp_tl_{side}_{eid}")
        if picked is not None:
            set_sel(episode=eid, step=picked)
            st.page_link(
                "pages/3_timeline.py",
                label=f"Read S{picked} of {eid}",
                query_params={"episode": eid, "step": str(picked)},
            )
elif "task" in qp:
    del qp["task"]
