"""Views shared by several pages: an episode's timeline and the step reader."""

from __future__ import annotations

import streamlit as st

from memuse_core import timeline as TL
from pages._shared import NOT_BUILT, md_code, md_escape, q, seed, sel, set_sel, show_text


def render_timeline(episode_id: str, *, key: str, step_key: str | None = None) -> int | None:
    """Draw one episode's timeline; returns the step picked by clicking/selecting a marker."""
    steps = q("episode_steps", episode_id)
    entries = q("episode_entries", episode_id)
    dels = q("episode_deliveries", episode_id)
    if not len(steps):
        st.info("This episode has no completed agent steps.")
        return None
    fig = TL.episode_timeline(
        steps.to_dict("records"),
        entries.to_dict("records"),
        dels.to_dict("records"),
        selected_step=sel("step") if step_key else None,
    )
    ev = st.plotly_chart(fig, key=key, on_select="rerun", selection_mode=("points", "box"))
    if not len(entries):
        st.caption(f"Credit windows: {NOT_BUILT}.")
    pts = ev.selection.points if ev is not None and hasattr(ev, "selection") else []
    picked = [p.get("customdata") for p in pts if p.get("customdata") is not None]
    if picked:
        c = picked[0]
        return int(c[0] if isinstance(c, list) else c)
    return None


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
    step = st.number_input("Step", min_value=1, max_value=n_steps, step=1, key=key)
    set_sel(step=int(step))
    txt = q("step_text", episode_id, int(step))
    if txt is None:
        st.warning("Step not found.")
        return int(step)
    code = "" if txt["exit_code"] is None else f" · exit code {txt['exit_code']}"
    st.markdown(f"**S{int(step)}** · tools: {md_code(txt['tools'] or '—')}{code}")
    st.markdown("Response")
    show_text(txt["response"])
    for name, args in txt["tool_calls"]:
        st.markdown(f"Tool call {md_code(name)}")
        show_text(args)
    for i, r in enumerate(txt["results"]):
        rc = "" if r["exit_code"] is None else f" (exit {r['exit_code']})"
        st.markdown(f"Result {i + 1}: {md_code(r['name'])}{md_escape(rc)}")
        show_text(r["output"])
    return int(step)
