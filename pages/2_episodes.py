"""Episodes: a filterable, sortable table with text search across task and trajectory text."""

from __future__ import annotations

import streamlit as st

from pages._shared import go, q, scope, url, write_url

st.title("Episodes")
runs = scope()
qp = st.query_params
if "ep_search" not in st.session_state and qp.get("q"):
    st.session_state["ep_search"] = qp.get("q")
search = st.text_input(
    "Search task and trajectory text",
    key="ep_search",
    placeholder="e.g. fromisoformat, Traceback, test_dates",
)
df = q("episode_table", runs, search or None, 20000)
c1, c2, c3, c4 = st.columns(4)
outcome = c1.multiselect("Outcome", ["resolved", "failed", "unknown"], key="ep_outcome")
flags = c2.multiselect(
    "Has span",
    ["positive", "negative", "unresolved"],
    key="ep_flags",
    help="Episodes with at least one span of each chosen triage label.",
)
repos = sorted(x for x in df["repo"].dropna().unique()) if len(df) else []
repo = c3.multiselect("Repository", repos, key="ep_repo")
task = c4.text_input("Task id contains", key="ep_task")
if outcome:
    df = df[df["outcome"].isin(outcome)]
for f in flags:
    df = df[df[f"has_{f}"]]
if repo:
    df = df[df["repo"].isin(repo)]
if task:
    df = df[df["task_id"].astype(str).str.contains(task, case=False, regex=False)]
write_url(q=search or None)

st.caption(f"{len(df):,} episodes. Click a column header to sort; select a row to open its timeline.")
view = df.copy()
view.insert(0, "timeline", [url("timeline", episode=e) for e in view["episode_id"]])
event = st.dataframe(
    view,
    hide_index=True,
    key="ep_table",
    on_select="rerun",
    selection_mode="single-row",
    height=640,
    column_config={
        "timeline": st.column_config.LinkColumn("timeline", display_text="open"),
        "cost_usd": st.column_config.NumberColumn("cost $", format="%.4f"),
        "delivered_tokens": st.column_config.NumberColumn("delivered tokens (est.)"),
    },
)
rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
if rows:
    eid = view.iloc[rows[0]]["episode_id"]
    go("timeline", episode=eid)
