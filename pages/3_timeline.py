"""Episode timeline: steps, deliveries at their consuming steps, credit windows per entry,
anchored actions and observed effects (MemUse Figure 4); the text of one step at a time."""

from __future__ import annotations

import streamlit as st

from pages._shared import (
    NOT_BUILT,
    annotation_form,
    link,
    md_code,
    md_escape,
    q,
    scope,
    seed,
    sel,
    set_sel,
    show_text,
    url,
    write_url,
)
from pages._views import render_timeline, step_reader

st.title("Episode timeline")
runs = scope()
ids = list(q("episode_ids", runs))
cur = sel("episode")
if cur and cur not in ids:
    ids.insert(0, cur)
if not ids:
    st.info("No episodes in this scope.")
    st.stop()
if cur is None:
    set_sel(episode=ids[0])
seed("tl_episode", "episode")
if st.session_state.get("tl_episode") not in ids:
    st.session_state["tl_episode"] = ids[0]
episode_id = st.selectbox("Episode", ids, key="tl_episode")
if episode_id != sel("episode"):
    set_sel(episode=episode_id, step=None)
head = q("episode_header", episode_id)
if head is None:
    st.error(f"Episode {episode_id!r} is not in the database.")
    st.stop()
outcome = {True: "resolved", False: "failed"}.get(head["resolved"], "no result")
st.markdown(
    f"**{md_escape(head['config'])}** · run {md_code(head['run_id'])} · task "
    f"{md_code(head['task_id'])} · repo {md_code(head['repo'] or '—')} · {outcome} · "
    f"{head['n_steps']} steps"
)
with st.expander("Task"):
    show_text(head["task"])
picked = render_timeline(episode_id, key="tl_chart", step_key="tl_step")
if picked is not None and picked != sel("step"):
    set_sel(step=picked)
    st.session_state["_seed_tl_step"] = None
spans = q("episode_spans", episode_id)
left, right = st.columns([3, 2])
with left:
    step = step_reader(episode_id, int(head["n_steps"] or 0), key="tl_step")
with right:
    st.markdown("**Spans of this episode**")
    if len(spans):
        view = spans.copy()
        view.insert(0, "inspect", [url("span", span=s) for s in view["span_id"]])
        st.dataframe(
            view,
            hide_index=True,
            key="tl_spans",
            column_config={"inspect": st.column_config.LinkColumn("inspect", display_text="open")},
        )
    else:
        st.info(f"Spans: {NOT_BUILT}.")
    if step is not None:
        annotation_form("step", f"{episode_id}#S{step}", episode_id, key="tl")
    link("cases", "Case studies →")
write_url(episode=episode_id, step=step, span=None, item=None)
