"""Compare two configurations or runs: overlaid profile radars, outcome-class and cost differences,
paired per-task outcomes (gained and lost tasks and whether any entry was acted on in them, MemUse
4.3), delivery-form differences, and one task's two episodes one above the other."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import common
from memuse_core.views import compare as cmp_view
from memuse_core.views import report as report_view
from memuse_core.views.common import display_name, display_table, judge_title
from memuse_core.views.overview import LEVELS
from memuse_core.wording import plural
from pages._pick import select_long
from pages._shared import (
    NOT_BUILT,
    cached,
    formatted_grid,
    from_url,
    link,
    md_code,
    md_escape,
    text_columns,
    url,
    view_judge,
    write_url,
)
from pages._timeline_chart import chart_key
from pages._widgets import render_timeline

st.title("Compare")
# The URL holds what differs from the defaults (run mode, A, B, pair filter, task): opening the
# page leaves its URL alone, a pasted or followed link restores the same comparison.
from_url("level", "cmp_level", options=LEVELS)
level = st.segmented_control("Compare", LEVELS, default="config", key="cmp_level") or "config"
options = cmp_view.options(cached(common.runs), level)
if len(options) < 2:
    st.info("Need at least two configurations or runs to compare.")
    st.stop()
default_a, default_b = cached(cmp_view.default_pair, level, options)  # the pair sharing most tasks
defaults = {"a": default_a, "b": default_b}
for side, default in defaults.items():
    from_url(side, f"cmp_{side}", options=options)
    if st.session_state.get(f"cmp_{side}") not in options:
        st.session_state[f"cmp_{side}"] = default
c1, c2 = st.columns(2)
a = c1.selectbox("A", options, key="cmp_a", format_func=display_name)
b = c2.selectbox("B", options, key="cmp_b", format_func=display_name)
cmp = cached(cmp_view.compare, level, a, b, view_judge())
write_url(
    level=None if level == "config" else level,
    a=None if a == defaults["a"] else a,
    b=None if b == defaults["b"] else b,
)

st.subheader(judge_title("Profiles (log scale 0.001%–100%)", cmp.judge))
if cmp.built:
    c1, c2 = st.columns(2)
    with c1:
        st.html(cmp.radar())  # escaped HTML (memuse_core.charts.profile)
    with c2:
        st.html(cmp.heatmap())
elif cmp.unprofiled:  # the sentences below say why (no memory delivered, not judged, not built)
    st.info("Profiles: neither side has a profile to draw.")
else:
    st.info(f"Profiles: {NOT_BUILT}.")
for why in cmp.unprofiled:
    st.caption(md_escape(why))
st.subheader(judge_title("Outcome classes, yields and efficiency", cmp.judge))
st.dataframe(
    cmp.metrics_display(), hide_index=True, key="cmp_diff", column_config=text_columns([a, b, "B − A"])
)

st.subheader(judge_title("Cost and delivery forms", cmp.judge))
formatted_grid(cmp.report.cost_table(), report_view.COST_FORMATS, key="cmp_cost")
if cmp.report.forms:
    st.plotly_chart(cmp.report.forms_chart(), key="cmp_forms")
    pivot = cmp.form_pivot()
    formatted_grid(pivot, cmp.form_pivot_formats(pivot), key="cmp_forms_table")

st.subheader(judge_title("Paired per-task outcomes", cmp.judge))
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
from_url("show", "cmp_show", options=cmp_view.PAIR_FILTERS)
which = st.segmented_control("Show", cmp_view.PAIR_FILTERS, default="changed", key="cmp_show") or "changed"
view = cmp.listed_display(which)
view.insert(0, "A", [url("timeline", episode=e) for e in view["episode_a"]])
view.insert(1, "B", [url("timeline", episode=e) for e in view["episode_b"]])
ev = st.dataframe(
    display_table(view),
    hide_index=True,
    key="cmp_pairs",
    on_select="rerun",
    selection_mode="single-row",
    column_config={
        "A": st.column_config.LinkColumn("A", display_text="open"),
        "B": st.column_config.LinkColumn("B", display_text="open"),
        "resolved_a": st.column_config.TextColumn(
            "resolved A", help="Share of A's episodes of the task resolved."
        ),
        "resolved_b": st.column_config.TextColumn(
            "resolved B", help="Share of B's episodes of the task resolved."
        ),
    },
)

tasks = list(cmp.pairs["task_id"])
from_url("task", "cmp_task", options=tasks)
if ev is not None and ev.selection.rows:
    st.session_state["cmp_task"] = view.iloc[ev.selection.rows[0]]["task_id"]
task = select_long(
    "Open a task's two episodes",
    [None, *tasks],
    key="cmp_task",
    format_func=lambda t: "—" if t is None else display_name(t),
)
write_url(show=None if which == "changed" else which, task=task)
pair = cmp.episodes_of(task) if task else None
if task and pair:
    for which_side, side, eid in zip(("a", "b"), (a, b), pair):
        head = cached(common.episode_header, eid)
        outcome, steps = (
            (common.outcome_text(head.outcome), plural(head.n_steps, "step")) if head else ("?", "? steps")
        )
        st.markdown(f"**{md_code(side)}** · {md_code(eid)} · {outcome} · {steps}")
        picked = render_timeline(eid, key=chart_key(f"cmp_tl_{which_side}", eid))
        if picked is not None:  # the pick made (eid, picked) the shared selection, at the click
            link("timeline", f"Read S{picked} of this episode", episode=eid, step=picked)
