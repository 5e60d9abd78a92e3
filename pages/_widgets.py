"""Widgets shared by several pages: an episode's timeline chart and the step reader."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from memuse_core.views import common
from memuse_core.views import episode_facts as ep_facts
from memuse_core.views import timeline as tl_view
from memuse_core.wording import plural
from pages._pick import select_long
from pages._shared import (
    NOT_BUILT,
    cached,
    md_code,
    md_escape,
    scope,
    seed,
    sel,
    set_sel,
    show_text,
    view_judge,
)
from pages._timeline_chart import timeline_chart


@contextmanager
def lazy_expander(label: str, key: str, expanded: bool = False) -> Iterator[bool]:
    """An expander whose content is drawn only while it is open: opening it reruns the page (from
    the cache), and the block under `with lazy_expander(...) as shown:` draws when `shown`. A
    closed expander's content still costs the browser its elements (a data grid about a third of
    a CPU-second of a new tab) on every run, J / K presses included. `expanded` opens it on its
    first run in a session; afterwards it stays as the reader left it."""
    box = st.expander(label, expanded=expanded, key=key, on_change="rerun")
    with box:
        yield bool(box.open)


def no_spans_note(episode_id: str) -> str:
    """Why an episode shows no spans or credit windows, in one sentence: no memory was delivered
    in it (nothing to build), or its context is not built yet (issue 15: "not built" only when it
    is true)."""
    facts = cached(ep_facts.episode_facts, episode_id)
    why = common.memory_note(facts.memory_state, facts.episode_id) if facts is not None else ""
    return md_escape(why) if why else f"No spans: {NOT_BUILT}."


def episode_picker(key: str) -> str:
    """The episode select box of the pages that read one episode: its choices are the sidebar
    scope's episodes (plus the selected one when a link brought it from elsewhere; a long list is
    offered as a window with a Find field, see `select_long`), and it keeps
    the shared `episode` selection; a change of episode clears the selected step. Stops the page
    with a note when the scope has no episode."""
    ids = list(cached(common.episode_choices, scope()))
    cur = sel("episode")
    if cur and cur not in ids:
        ids.insert(0, cur)
    if not ids:
        st.info("No episodes in this scope.")
        st.stop()
    if cur is None:
        set_sel(episode=ids[0])
    seed(key, "episode")
    if st.session_state.get(key) not in ids:
        st.session_state[key] = ids[0]
    episode_id: str = select_long("Episode", ids, key=key, format_func=common.display_name)
    if episode_id != sel("episode"):
        set_sel(episode=episode_id, step=None)
    return episode_id


def go_to_step(step: int, step_key: str) -> None:
    """Make `step` the selected step everywhere before the page runs (chart cursor, Step box)."""
    set_sel(step=step)
    st.session_state[step_key] = step
    st.session_state[f"_seed_{step_key}"] = step


def _on_pick(key: str, step_key: str) -> None:
    picked = (st.session_state.get(key) or {}).get("pick")
    if picked is not None:
        go_to_step(int(picked), step_key)


def _on_chart_select(key: str, episode_id: str) -> None:
    """A pick on a chart without a Step box (Compare): kept, so the page shows it until the next
    pick (a click is a one-run event), and made the shared selection (episode and step) here, at
    the click: with two charts on a page the selection follows the last click, not the chart
    drawn last."""
    picked = (st.session_state.get(key) or {}).get("pick")
    if picked is not None:
        st.session_state[f"_{key}_picked"] = int(picked)
        set_sel(episode=episode_id, step=int(picked))


def render_timeline(episode_id: str, *, key: str, step_key: str | None = None) -> int | None:
    """Draw one episode's timeline (SVG, `pages/_timeline_chart.py`); returns the step picked by
    clicking a marker (the last pick, which the chart's cursor marks; None with `step_key`,
    where a pick moves the Step box). A pick also makes the episode and step the shared
    selection, at the click.

    With `step_key` (the page's Step box) the chart's cursor marks the selected step, and a pick
    is applied in a callback, before the page runs, so the cursor drawn on this run is already at
    the picked step. Moving the step (Step box, J / K) sends the same drawing with another step:
    the browser redraws the SVG in place (a few milliseconds)."""
    tl = cached(tl_view.timeline, episode_id, judge=view_judge(), drawing_only=True)
    if tl.drawing is None:
        st.info("This episode has no completed agent steps.")
        return None
    if step_key:
        cursor: int | None = int(sel("step") or 1)  # the Step box below makes a missing step 1
    else:  # a chart without a Step box (Compare) marks its last pick
        last = st.session_state.get(f"_{key}_picked")
        cursor = int(last) if last is not None else None
    timeline_chart(
        tl.drawing,
        cursor,
        key=key,
        on_pick=(lambda: _on_pick(key, step_key))
        if step_key
        else (lambda: _on_chart_select(key, episode_id)),
    )
    st.caption(f"{tl.caption} {tl.judge_note}")
    if not tl.windows:
        st.caption(f"No credit windows. {no_spans_note(episode_id)}")
    elif len(tl.window_rows):
        with lazy_expander("Credit windows and why each ends", f"{key}_windows_open") as shown:
            if shown:
                st.dataframe(common.display_table(tl.window_rows), hide_index=True, key=f"{key}_windows")
    picked = st.session_state.get(f"_{key}_picked")
    return int(picked) if picked is not None else None


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
        st.markdown(f"Result {i + 1}: {md_code(r.name or '—')}{md_escape(rc)}")
        show_text(r.output, max_chars=max_chars)


def _on_step_box(key: str) -> None:
    v = st.session_state.get(key)
    if v is not None:
        go_to_step(int(v), key)


def _move(key: str, delta: int, n_steps: int) -> None:
    cur = sel("step") or st.session_state.get(key) or 1
    go_to_step(min(n_steps, max(1, int(cur) + delta)), key)


def step_keys(key: str, n_steps: int) -> None:
    """Previous / next step buttons with the keyboard shortcuts K and J (Streamlit's documented
    `shortcut` of st.button); each moves the shared step before the page runs.

    A horizontal container of buttons as wide as their labels (with the shortcut hint), not
    fixed columns: at 1400 px the columns cut the labels to "◀ Pr…" and "Next…"."""
    row = st.container(horizontal=True, key=f"{key}_moves")
    row.button(
        "◀ Previous step",
        key=f"{key}_prev",
        shortcut="K",
        on_click=_move,
        args=(key, -1, n_steps),
        help="Keyboard: K",
    )
    row.button(
        "Next step ▶",
        key=f"{key}_next",
        shortcut="J",
        on_click=_move,
        args=(key, 1, n_steps),
        help="Keyboard: J",
    )


def step_reader(episode_id: str, n_steps: int, *, key: str) -> int | None:
    """Pick a step (box, J / K keys) and show its full response and tool results (loaded on
    demand). A change is applied in a callback, so a chart drawn above already shows it."""
    if n_steps <= 0:
        return None
    cur = sel("step")
    if cur is None or not (1 <= int(cur) <= n_steps):
        if cur is not None:  # a link or URL named a step this episode does not have: say so
            st.caption(f"Step {int(cur)} is not in this episode ({plural(n_steps, 'step')}): showing step 1.")
        set_sel(step=1)
    seed(key, "step")
    if st.session_state.get(key) is not None and not (1 <= int(st.session_state[key]) <= n_steps):
        st.session_state[key] = 1
    step = int(
        st.number_input(
            "Step", min_value=1, max_value=n_steps, step=1, key=key, on_change=_on_step_box, args=(key,)
        )
    )
    set_sel(step=step)
    step_keys(key, n_steps)
    txt = cached(common.step_text, episode_id, step)
    if txt is None:
        st.warning("Step not found.")
    else:
        show_step(txt)
    return step
