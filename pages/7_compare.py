"""Compare two configurations or runs: overlaid profile radars, triage and cost differences, paired
per-task outcomes (gained and lost tasks and whether any entry was acted on in them, MemUse 4.3),
delivery-form differences, and one task's two episodes one above the other."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memuse_core import charts as TL  # the aggregate charts (the episode timeline is `timeline`)
from pages._shared import NOT_BUILT, fmt_num, q, q_or_empty, set_sel, url
from pages._views import render_timeline

st.title("Compare")
runs_df = q("list_runs")
level = st.segmented_control("Compare", ["config", "run"], default="config", key="cmp_level") or "config"
options = sorted(runs_df["config"].unique()) if level == "config" else list(runs_df["run_id"])
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


def runs_of(x: str) -> list[str]:
    return list(runs_df[runs_df["config"] == x]["run_id"]) if level == "config" else [x]


ra, rb = runs_of(a), runs_of(b)
ov = q_or_empty("metrics.overview_frame", ra + rb, level)
if len(ov):
    ov = ov.copy()
    ov["group"] = ov["config"] if level == "config" else ov["run_id"].astype(str)
    ov = ov[ov["group"].isin([a, b])].set_index("group")
st.subheader("Profiles (log scale 0.001%–100%)")
if len(ov) and ov["profiled_spans"].sum() > 0:
    profiles = {
        g: {ax: (None if pd.isna(ov.loc[g, ax]) else float(ov.loc[g, ax])) for ax in TL.AXES}
        for g in (a, b)
        if g in ov.index
    }
    c1, c2 = st.columns(2)
    c1.plotly_chart(TL.profile_radar(profiles), key="cmp_radar")
    c2.plotly_chart(TL.profile_heatmap(profiles), key="cmp_heatmap")
    cols = (
        ["spans", "profiled_spans", "n_triage"]
        + [c for c in ov.columns if c.startswith("triage_") or c.startswith("rate_")]
        + ["benefit_yield", "harm_yield", "token_efficiency", "est_tokens"]
    )
    cols = [c for c in cols if c in ov.columns]
    diff = pd.DataFrame(
        {
            "metric": cols,
            a: [ov.loc[a, c] if a in ov.index else None for c in cols],
            b: [ov.loc[b, c] if b in ov.index else None for c in cols],
        }
    )
    diff["B − A"] = [
        None if x is None or y is None or pd.isna(x) or pd.isna(y) else y - x
        for x, y in zip(diff[a], diff[b])
    ]
    st.subheader("Triage, yields and efficiency")
    st.dataframe(diff, hide_index=True, key="cmp_diff")
else:
    st.info(f"Profiles: {NOT_BUILT}.")

rep = q("metrics.build_report", ra + rb, None)
st.subheader("Cost and delivery forms")
cost_rows, form_rows = [], []
for g in (a, b):
    cfg = g if level == "config" else runs_df[runs_df["run_id"] == g]["config"].iloc[0]
    cs = rep.configs.get(cfg)
    if cs is None:
        continue
    gs = cs if level == "config" else cs.runs.get(g, cs)
    c = gs.cost
    cost_rows.append(
        {
            "group": g,
            "agent $/episode": c.agent_cost_per_episode,
            "memory $/episode": c.memory_cost_per_episode,
            "agent tokens/episode": c.agent_tokens_per_episode,
            "judge $": c.judge_cost,
            "resolve rate": gs.outcome.resolve_rate,
        }
    )
    for f in gs.forms:
        form_rows.append(
            {
                "group": g,
                "form": f.form,
                "route": f.route,
                "token_share": f.token_share,
                "beneficial_share": f.beneficial_share,
                "tokens": f.tokens,
                "beneficial": f.beneficial,
            }
        )
st.dataframe(pd.DataFrame(cost_rows), hide_index=True, key="cmp_cost")
if form_rows:
    st.plotly_chart(TL.form_share_chart(form_rows), key="cmp_forms")
    fd = pd.DataFrame(form_rows).pivot_table(
        index=["form", "route"], columns="group", values=["token_share", "beneficial_share"], aggfunc="sum"
    )
    fd.columns = [f"{m} · {g}" for m, g in fd.columns]
    st.dataframe(fd.reset_index(), hide_index=True, key="cmp_forms_table")

st.subheader("Paired per-task outcomes")
pairs = q("paired_outcomes", ra, rb)
if not len(pairs):
    st.info("The two sides share no tasks.")
    st.stop()
pairs = pairs.copy()
pairs["change"] = [
    "gained" if y > x else "lost" if y < x else "same"
    for x, y in zip(pairs["resolved_a"], pairs["resolved_b"])
]
gained, lost = pairs[pairs["change"] == "gained"], pairs[pairs["change"] == "lost"]
m1, m2, m3, m4 = st.columns(4)
m1.metric("Tasks paired", len(pairs))
m2.metric("Gained by B", len(gained), help="B resolves the task more often than A.")
m3.metric("Lost by B", len(lost))
m4.metric(
    "Changed tasks with an acted-on entry in B",
    f"{int(gained['acted_b'].fillna(False).sum() + lost['acted_b'].fillna(False).sum())} / {len(gained) + len(lost)}",
)
st.caption(
    "As in MemUse 4.3: most outcome changes lack an acted-on entry in the record. "
    f"Gains with beneficial use: {int(gained['beneficial_b'].fillna(False).sum())}; losses with harmful use: "
    f"{int(lost['harmful_b'].fillna(False).sum())}."
)
only = st.segmented_control("Show", ["changed", "all"], default="changed", key="cmp_show") or "changed"
view = pairs if only == "all" else pairs[pairs["change"] != "same"]
view = view.copy()
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

tasks = list(pairs["task_id"])
v = qp.get("task")
if v in tasks and st.session_state.get("_cmp_seen_task") != v:
    st.session_state["cmp_task"] = v
    st.session_state["_cmp_seen_task"] = v
if ev is not None and ev.selection.rows:
    st.session_state["cmp_task"] = view.iloc[ev.selection.rows[0]]["task_id"]
task = st.selectbox("Open a task's two episodes", [None] + tasks, key="cmp_task")
if task:
    qp["task"] = task
    r = pairs[pairs["task_id"] == task].iloc[0]
    for side, eid in ((a, r["episode_a"]), (b, r["episode_b"])):
        head = q("episode_header", eid)
        outcome = {True: "resolved", False: "failed"}.get(head["resolved"], "no result") if head else "?"
        st.markdown(f"**{side}** · `{eid}` · {outcome} · {fmt_num(head['n_steps'] if head else None)} steps")
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
