"""Widgets of the transcript reader: jump to a step, one step with its memory marks, and the
scroll to the selected step."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import transcript as tr_view
from pages._shared import sel
from pages._text import html_code, html_inline, verbatim_block
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


STEP_STYLE = "padding:0.75rem 1rem;margin:0 0 0.5rem 0;border-radius:0.5rem;border:1px solid {}"
"""A transcript step's frame; the selected step's border shows (as st.container(border=True))."""
FOLD_STYLE = (
    "border:1px solid rgba(128,128,128,0.25);border-radius:0.5rem;padding:0.25rem 0.75rem;margin:0.5rem 0"
)
"""A collapsible part of a step (tool call, result, reasoning), like an expander."""


def _fold(summary: str, body: str, *, open_: bool) -> str:
    """A native `<details>` block: `summary` and `body` are HTML already escaped by the caller."""
    return (
        f'<details style="{FOLD_STYLE}"{" open" if open_ else ""}>'
        f'<summary style="cursor:pointer;padding:0.25rem 0">{summary}</summary>{body}</details>'
    )


def step_html(s: tr_view.TranscriptStep, *, selected: bool) -> str:
    """One transcript step as one HTML block: its heading (anchor `s<n>`), memory deliveries and
    credit-window marks, the response, tool calls and results (collapsible `<details>`, open for
    the selected step). Every recorded string is neutralised and HTML-escaped here
    (`html_inline`, `html_code`, `verbatim_block`); nothing recorded is written as markup.

    One element per step instead of one per line, block and expander: a page of 20 steps was
    about 80 Streamlit elements, and the browser's time for a page grows with its elements."""
    code = "" if s.exit_code is None else f" · exit {s.exit_code}"
    parts = [f'<h3 id="s{s.step}">S{s.step} · {html_inline(s.kind)}{code}</h3>']
    for d in s.deliveries:
        again = " · restatement (no new verdict)" if d.restatement else ""
        parts.append(
            f"<p>▼ <b>Memory delivered into this input:</b> {html_code(d.delivery_id)} · "
            f"{html_inline(d.form or '—')} · {html_inline(d.route or '—')} · span {html_code(d.span_id)}{again}</p>"
        )
        if d.entries:
            parts.append(
                "<ul>"
                + "".join(
                    f"<li>{html_code(e.label)} — credit window <b>{html_inline(e.window)}</b>: "
                    f"{html_inline(e.why_it_ends)}</li>"
                    for e in d.entries
                )
                + "</ul>"
            )
    shown = {e.label for d in s.deliveries for e in d.entries}
    for e in s.windows_open:
        if e.label not in shown:
            parts.append(f"<p>⟦ credit window of {html_code(e.label)} opens ({html_inline(e.window)})</p>")
    for e in s.windows_close:
        parts.append(
            f"<p>⟧ credit window of {html_code(e.label)} ends here: {html_inline(e.why_it_ends)}</p>"
        )
    if s.anchored_by:
        parts.append("<p>■ anchored action of " + ", ".join(html_code(a) for a in s.anchored_by) + "</p>")
    if s.reasoning:
        parts.append(_fold("Reasoning", verbatim_block(s.reasoning, max_chars=RESULT_CHARS), open_=selected))
    parts.append(verbatim_block(s.response or " ", max_chars=RESULT_CHARS))
    for c in s.tool_calls:
        body = verbatim_block(c.arguments, max_chars=RESULT_CHARS)
        parts.append(_fold(f"Tool call {html_inline(c.name)}", body, open_=selected))
    for i, r in enumerate(s.results):
        rc = "" if r.exit_code is None else f" · exit {r.exit_code}"
        body = verbatim_block(r.output, max_chars=RESULT_CHARS)
        parts.append(_fold(f"Result {i + 1}: {html_inline(r.name or '—')}{rc}", body, open_=selected))
    frame = STEP_STYLE.format("rgba(128,128,128,0.4)" if selected else "transparent")
    return f'<div class="memuse-step" style="{frame}">{"".join(parts)}</div>'


def transcript_step(s: tr_view.TranscriptStep, *, selected: bool) -> None:
    """One step (see `step_html`), drawn as one element. Recorded text is shown inert."""
    st.html(step_html(s, selected=selected))


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
