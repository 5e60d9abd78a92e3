"""Widgets shared by several pages: an episode's timeline chart and the step reader."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import common
from memuse_core.views import timeline as tl_view
from pages._shared import NOT_BUILT, cached, md_code, md_escape, seed, sel, set_sel, show_text


def render_timeline(episode_id: str, *, key: str, step_key: str | None = None) -> int | None:
    """Draw one episode's timeline; returns the step picked by clicking/selecting a marker."""
    tl = cached(tl_view.timeline, episode_id, sel("step") if step_key else None)
    if tl.figure is None:
        st.info("This episode has no completed agent steps.")
        return None
    ev = st.plotly_chart(tl.figure, key=key, on_select="rerun", selection_mode=("points", "box"))
    if not tl.windows:
        st.caption(f"Credit windows: {NOT_BUILT}.")
    points = ev.selection.points if ev is not None and hasattr(ev, "selection") else []
    return tl_view.picked_step(points)


def show_step(step: common.StepText, *, max_chars: int = 20000) -> None:
    """One step's response (with the provider's reasoning text beside it, when recorded), tool
    calls and results (recorded text shown inert)."""
    code = "" if step.exit_code is None else f" · exit code {step.exit_code}"
    st.markdown(f"**S{step.step}** · tools: {md_code(step.tools or '—')}{code}")
    if step.reasoning:
        response, reasoning = st.columns(2)
        with response:
            st.markdown("Response")
            show_text(step.response, max_chars=max_chars)
        with reasoning:
            st.markdown("Reasoning", help="Reasoning text the model's provider returned with this response.")
            show_text(step.reasoning, max_chars=max_chars)
    else:
        st.markdown("Response")
        show_text(step.response, max_chars=max_chars)
    for call in step.tool_calls:
        st.markdown(f"Tool call {md_code(call.name)}")
        show_text(call.arguments, max_chars=max_chars)
    for i, r in enumerate(step.results):
        rc = "" if r.exit_code is None else f" (exit {r.exit_code})"
        st.markdown(f"Result {i + 1}: {md_code(r.name)}{md_escape(rc)}")
        show_text(r.output, max_chars=max_chars)


def step_reader(episode_id: str, n_steps: int, *, key: str) -> int | None:
    """Pick a step and show its full response and tool results (loaded on demand)."""
    if n_steps <= 0:
        return None
    cur = sel("step")
    if cur is None or not (1 <= int(cur) <= n_steps):
        set_sel(step=1)
    seed(key, "step")
    if st.session_state.get(key) is not None and not (1 <= int(st.session_state[key]) <= n_steps):
        st.session_state[key] = 1
    step = int(st.number_input("Step", min_value=1, max_value=n_steps, step=1, key=key))
    set_sel(step=step)
    txt = cached(common.step_text, episode_id, step)
    if txt is None:
        st.warning("Step not found.")
    else:
        show_step(txt)
    return step
