"""Episodes: a filterable, sortable table with text search across task and trajectory text."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import episodes as ep_view
from memuse_core.views.common import display_name, judge_title
from memuse_core.wording import plural
from pages._shared import cached, from_url, go, scope, view_judge, write_url

st.title("Episodes")
runs = scope()
repo_choices = cached(ep_view.repositories, runs)
# Every filter is in the URL: a pasted or followed link restores the same table.
from_url("q", "ep_search")
from_url("outcome", "ep_outcome", options=ep_view.OUTCOME_CHOICES, multi=True)
from_url("has", "ep_flags", options=ep_view.SPAN_CLASS_CHOICES, multi=True)
from_url("repo", "ep_repo", options=repo_choices, multi=True)
from_url("task", "ep_task")
search = st.text_input(
    "Search task and trajectory text",
    key="ep_search",
    placeholder="e.g. fromisoformat, Traceback, test_dates",
)
c1, c2, c3, c4 = st.columns(4)
outcomes = c1.multiselect(
    "Outcome",
    ep_view.OUTCOME_CHOICES,
    key="ep_outcome",
    format_func=lambda o: ep_view.OUTCOME_CHOICE_LABELS.get(o, o),
    help="The harness result; an episode without one is unknown (—), never counted as not resolved.",
)
classes = c2.multiselect(
    "Has span",
    ep_view.SPAN_CLASS_CHOICES,
    key="ep_flags",
    help="Episodes with at least one span of each chosen outcome class (the sidebar's judge).",
)
repos = c3.multiselect("Repository", repo_choices, key="ep_repo", format_func=display_name)
task = c4.text_input("Task id contains", key="ep_task")
filters = ep_view.EpisodeFilters(
    search=search, outcomes=outcomes, span_classes=classes, repos=repos, task=task
)
judge = view_judge()
episodes = cached(ep_view.episode_table, runs, filters, judge)  # display-ready, links included
write_url(q=search or None, outcome=outcomes, has=classes, repo=repos, task=task or None)

st.caption(
    f"{plural(len(episodes.episode_ids), 'episode')}"
    + (f" (first {ep_view.ROW_LIMIT:,})" if episodes.truncated else "")
    + ". Click a column header to sort; select a row to open its timeline."
)
event = st.dataframe(
    episodes.table,
    hide_index=True,
    key="ep_table",
    on_select="rerun",
    selection_mode="single-row",
    height=640,
    column_config={
        "timeline": st.column_config.LinkColumn("timeline", display_text="open"),
        "cost_usd": st.column_config.NumberColumn("cost $", format="%.4f"),
        "delivered_tokens": st.column_config.NumberColumn("delivered tokens (est.)"),
        "span_classes": st.column_config.ListColumn(judge_title("span outcome classes", judge)),
        "harness": st.column_config.TextColumn("harness", help="How the harness report classified the task."),
        "exit status": st.column_config.TextColumn("exit status", help="The agent's exit status."),
        "memory": st.column_config.TextColumn("memory", help="Whether memory was delivered and built."),
    },
)
rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
if rows:
    go("timeline", episode=episodes.episode_ids[rows[0]])
