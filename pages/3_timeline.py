"""Episode timeline: steps, deliveries at their consuming steps, credit windows per entry with why
each ends, anchored actions and observed effects (MemUse Figure 4, A.1.5); the text of one step at
a time, moved by clicking a marker, the Step box or the J / K keys."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import common
from memuse_core.views import timeline as tl_view
from memuse_core.wording import plural
from pages._shared import (
    annotation_form,
    cached,
    link,
    md_code,
    md_escape,
    show_text,
    url,
    view_judge,
    write_url,
)
from pages._widgets import episode_picker, lazy_expander, no_spans_note, render_timeline, step_reader

st.title("Episode timeline")
episode_id = episode_picker("tl_episode")
ep = cached(tl_view.episode, episode_id, view_judge())
if ep is None:
    st.error(f"Episode {md_code(episode_id)} is not in the database.")
    st.stop()
head = ep.header
st.markdown(
    f"**{md_escape(head.config)}** · run {md_code(head.run_id)} · task {md_code(head.task_id)} · "
    f"{md_escape(head.repository)} · outcome {common.outcome_text(head.outcome)} · "
    + (f"exit {md_code(head.exit_status)} · " if head.exit_status else "")
    + f"{plural(head.n_steps, 'step')}"
)
with st.expander("Task"):
    show_text(head.task)
render_timeline(episode_id, key="tl_chart", step_key="tl_step")
left, right = st.columns([3, 2])
with left:
    step = step_reader(episode_id, head.n_steps, key="tl_step")
    link("transcript", "Read the whole transcript →", episode=episode_id, step=step)
with right:
    if len(ep.spans):
        # The chart above shows the spans' windows; their table is drawn when asked for.
        n = len(ep.spans)
        label = f"{common.judge_title('Spans of this episode', ep.judge)}: {n} span{'s' if n != 1 else ''}"
        with lazy_expander(label, "tl_spans_open") as shown:
            if shown:
                view = ep.spans.copy()
                view.insert(0, "inspect", [url("span", span=s) for s in view["span_id"]])
                st.dataframe(
                    common.display_table(view),
                    hide_index=True,
                    key="tl_spans",
                    column_config={"inspect": st.column_config.LinkColumn("inspect", display_text="open")},
                )
    else:
        st.markdown(f"**{common.judge_title('Spans of this episode', ep.judge)}**")
        st.info(no_spans_note(episode_id))
    if step is not None:
        # The form's eight widgets are drawn only when it is open (as on the span page); it stays
        # open or closed while J / K move the step.
        with lazy_expander("Annotate this step", "tl_annotate_open") as shown:
            if shown:
                annotation_form("step", f"{episode_id}#S{step}", episode_id, key="tl")
    link("cases", "Case studies →")
write_url(episode=episode_id, step=step, span=None, item=None)
