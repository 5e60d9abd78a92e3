"""Episodes: a filterable, sortable table with text search across task and trajectory text."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import episodes as ep_view
from pages._shared import cached, go, scope, url, write_url

st.title("Episodes")
runs = scope()
if "ep_search" not in st.session_state and st.query_params.get("q"):
    st.session_state["ep_search"] = st.query_params.get("q")
search = st.text_input(
    "Search task and trajectory text",
    key="ep_search",
    placeholder="e.g. fromisoformat, Traceback, test_dates",
)
c1, c2, c3, c4 = st.columns(4)
outcomes = c1.multiselect("Outcome", ep_view.OUTCOME_CHOICES, key="ep_outcome")
classes = c2.multiselect(
    "Has span",
    ep_view.SPAN_CLASS_CHOICES,
    key="ep_flags",
    help="Episodes with at least one span of each chosen outcome class.",
)
repos = c3.multiselect("Repository", cached(ep_view.repositories, runs), key="ep_repo")
task = c4.text_input("Task id contains", key="ep_task")
filters = ep_view.EpisodeFilters(
    search=search, outcomes=outcomes, span_classes=classes, repos=repos, task=task
)
episodes = cached(ep_view.episode_list, runs, filters)
write_url(q=search or None)

st.caption(
    f"{len(episodes.rows):,} episodes"
    + (f" (first {ep_view.ROW_LIMIT:,})" if episodes.truncated else "")
    + ". Click a column header to sort; select a row to open its timeline."
)
view = episodes.rows.copy()
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
        "span_classes": st.column_config.ListColumn("span outcome classes"),
    },
)
rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
if rows:
    go("timeline", episode=view.iloc[rows[0]]["episode_id"])
