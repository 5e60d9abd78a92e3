"""Widgets of the transcript reader: jump to a step, one step with its memory marks, and the
scroll to the selected step."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import transcript as tr_view
from pages._shared import md_code, md_escape, sel, show_text
from pages._widgets import go_to_step

RESULT_CHARS = 8000
"""Characters of one tool result shown inline (the step reader on the timeline shows all)."""


def _on_jump(key: str) -> None:
    v = st.session_state.get(f"{key}_jump")
    if v is not None:
        go_to_step(int(v), key)


def _on_pick_hit(key: str, pills_key: str) -> None:
    v = st.session_state.get(pills_key)
    if v:
        go_to_step(int(str(v)[1:]), key)


def jump_to(key: str, n_steps: int) -> int:
    """The selected step (shared), with a "Jump to step" box that moves it."""
    step = int(sel("step") or 1)
    st.session_state[f"{key}_jump"] = step
    st.number_input(
        "Jump to step",
        min_value=1,
        max_value=n_steps,
        step=1,
        key=f"{key}_jump",
        on_change=_on_jump,
        args=(key,),
    )
    return step


def hit_pills(key: str, steps: list[int]) -> None:
    """Steps with search hits; picking one jumps to it."""
    st.pills(
        "Steps with hits",
        [f"S{s}" for s in steps],
        key=f"{key}_hits",
        on_change=_on_pick_hit,
        args=(key, f"{key}_hits"),
    )


def transcript_step(s: tr_view.TranscriptStep, *, selected: bool) -> None:
    """One step: its memory deliveries and credit-window marks, the response, tool calls and
    results (collapsible; open for the selected step). Recorded text is shown inert."""
    code = "" if s.exit_code is None else f" · exit {s.exit_code}"
    with st.container(border=selected, key=f"tr_s{s.step}"):
        st.subheader(f"S{s.step} · {md_escape(s.kind)}{code}", anchor=f"s{s.step}")
        for d in s.deliveries:
            again = " · restatement (no new verdict)" if d.restatement else ""
            st.markdown(
                f"▼ **Memory delivered into this input:** {md_code(d.delivery_id)} · "
                f"{md_escape(d.form or '—')} · {md_escape(d.route or '—')} · span {md_code(d.span_id)}{again}"
            )
            for e in d.entries:
                st.markdown(
                    f"- {md_code(e.label)} — credit window **{e.window}**: {md_escape(e.why_it_ends)}"
                )
        shown = {e.label for d in s.deliveries for e in d.entries}
        for e in s.windows_open:
            if e.label not in shown:
                st.markdown(f"⟦ credit window of {md_code(e.label)} opens ({e.window})")
        for e in s.windows_close:
            st.markdown(f"⟧ credit window of {md_code(e.label)} ends here: {md_escape(e.why_it_ends)}")
        if s.anchored_by:
            st.markdown("■ anchored action of " + ", ".join(md_code(a) for a in s.anchored_by))
        if s.reasoning:
            with st.expander("Reasoning", expanded=selected):
                show_text(s.reasoning, max_chars=RESULT_CHARS)
        show_text(s.response or " ", max_chars=RESULT_CHARS)
        for c in s.tool_calls:
            with st.expander(f"Tool call {md_escape(c.name)}", expanded=selected):
                show_text(c.arguments, max_chars=RESULT_CHARS)
        for i, r in enumerate(s.results):
            rc = "" if r.exit_code is None else f" · exit {r.exit_code}"
            with st.expander(f"Result {i + 1}: {md_escape(r.name)}{rc}", expanded=selected):
                show_text(r.output, max_chars=RESULT_CHARS)


def scroll_to(step: int) -> None:
    """Scroll the page to a step's heading once after it was picked (a two-line script that
    names only the step number; st.html runs it with unsafe_allow_javascript)."""
    if st.session_state.get("_tr_scrolled") == step:
        return
    st.session_state["_tr_scrolled"] = step
    st.html(
        f"<script>setTimeout(() => {{ const e = parent.document.getElementById('s{int(step)}') "
        f"|| document.getElementById('s{int(step)}'); if (e) e.scrollIntoView({{block: 'start'}}); }}, 300);</script>",
        unsafe_allow_javascript=True,
    )
