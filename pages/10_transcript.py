"""Full transcript of an episode: every step's response, tool calls and results (collapsible),
the memory deliveries it consumed and the credit windows that open and close at it (MemUse 3.3,
A.1.5), paged; jump to a step, J / K for the next / previous step, find text in the episode."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import common
from memuse_core.views import search as search_view
from memuse_core.views import transcript as tr_view
from memuse_core.wording import plural
from pages._reader import hit_pills, jump_to, scroll_to, transcript_step
from pages._shared import cached, link, md_code, md_escape, sel, set_sel, show_text, write_url
from pages._widgets import episode_picker, step_keys

st.title("Transcript")
episode_id = episode_picker("tr_episode")
head = cached(common.episode_header, episode_id)
if head is None:
    st.error(f"Episode {md_code(episode_id)} is not in the database.")
    st.stop()
n = head.n_steps
if n <= 0:
    st.info("This episode has no completed agent steps.")
    st.stop()
if sel("step") is None or not 1 <= int(sel("step")) <= n:
    set_sel(step=1)
st.markdown(
    f"**{md_escape(head.config)}** · run {md_code(head.run_id)} · task {md_code(head.task_id)} · "
    f"{common.outcome_text(head.outcome)} · {plural(n, 'step')}"
)
with st.expander("Task"):
    show_text(head.task)

left, right = st.columns([1, 2])
with left:
    step = jump_to("tr_step", n)
    step_keys("tr_step", n)
with right:
    query = st.text_input("Find in this transcript", key="tr_find")
    if query:
        found = cached(search_view.search, query, None, episode_id)
        st.caption(
            f"{len(found.hits)} hits{' (first ones)' if found.truncated else ''} for {md_code(found.query)}"
        )
        if found.steps:
            hit_pills("tr_step", found.steps)

tr = cached(tr_view.transcript, episode_id, tr_view.page_of(step))
assert tr is not None
st.caption(
    f"Steps {tr.first}–{tr.last} of {n} (page {tr_view.page_of(step) + 1} of {tr.pages}). "
    "▼ marks a memory delivery in the step's input; credit windows (A.1.5) open and close where marked."
)
for s in tr.steps:
    transcript_step(s, selected=s.step == step)
scroll_to(step)
link("timeline", "Timeline of this episode →", episode=episode_id, step=step)
write_url(episode=episode_id, step=step, span=None, item=None)
