"""MemTrim what-if: for any recorded delivery, the evidence units MemTrim would keep or remove
(shared with the prior context, conflicting, memory-only), its decision on any stored answer and
why, and the trimmed text; across the corpus, tokens saved and agreement with the judge's novelty
labels (MemTrim 3.3, A.1 applied to MemUse deliveries). Widgets -> one view call -> one figure
(HTML bars)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memuse_core.views.common import display_name
from memuse_core.views.memtrim import EntryWhatIfView, MemTrimView, memtrim_view
from pages._pick import select_long
from pages._shared import LOCK_TIMEOUT, db_key, md_escape, scope, sel, set_sel, show_text, write_url
from pages._text import NOTE_STYLE, html_code, html_inline, verbatim_block

COLOURS = {
    "shared": "orange",
    "conflicting": "red",
    "memory_only": "green",
    "answer_units": "violet",
    "withheld": "gray",
}


# The background of a unit of each colour in an HTML block (as markdown's `:red-background[...]`);
# a comment, not a docstring: Streamlit magic would draw a bare string on the page.
BACKGROUNDS = {
    "orange": "rgba(255,164,33,0.25)",
    "red": "rgba(255,75,75,0.25)",
    "green": "rgba(33,195,84,0.25)",
    "violet": "rgba(128,61,245,0.25)",
    "gray": "rgba(128,128,128,0.25)",
}
ENTRY_STYLE = (
    "border:1px solid rgba(128,128,128,0.3);border-radius:0.5rem;padding:0.5rem 1rem;margin:0 0 0.75rem 0"
)
SCROLL_STYLE = "max-height:380px;overflow-y:auto;border:1px solid rgba(128,128,128,0.3);border-radius:0.5rem;padding:0.5rem 1rem"


def _unit(klass: str, text: str) -> str:
    colour = BACKGROUNDS[COLOURS[klass]]
    return (
        f'<span style="background:{colour};padding:0 0.2em;border-radius:0.2rem">{html_inline(text)}</span>'
    )


def _entry_html(e: EntryWhatIfView, class_help: dict[str, str]) -> str:
    """One delivered entry and MemTrim's decision as an HTML block: every recorded string is
    neutralised and escaped (`html_inline`, `html_code`, `verbatim_block`). One element for all
    entries instead of five per entry: the browser's time for a page grows with its elements."""
    out = [
        f"<p><b>#{int(e.pos)}</b> {html_code(e.item_id)} · class <b>{html_inline(e.trim_class)}</b> "
        f"({html_inline(class_help.get(e.trim_class, ''))}) · stored answer <b>{html_inline(e.outcome)}</b> · "
        f"overlap (Jaccard) {e.jaccard:.2f}</p>"
    ]
    if e.explanation:
        out.append(f'<p style="{NOTE_STYLE}">' + "<br>".join(html_inline(x) for x in e.explanation) + "</p>")
    if e.units:
        out.append(
            "<p>" + "<br>".join(f"{_unit(u.klass, u.text)} · {html_code(u.key)}" for u in e.units) + "</p>"
        )
    if e.kept_lines:
        out.append("<p>Passed on:</p>" + verbatim_block("\n".join(e.kept_lines)))
    else:
        out.append("<p>Passed on: nothing</p>")
    return f'<div class="memuse-entry" style="{ENTRY_STYLE}">{"".join(out)}</div>'


@st.cache_data(ttl=600, max_entries=64, show_spinner=False)
def _view(
    key: tuple[str, float, float], runs: tuple[str, ...] | None, episode: str | None, delivery: str | None
) -> MemTrimView:
    return memtrim_view(
        key[0],
        runs=list(runs) if runs is not None else None,
        episode=episode,
        delivery=delivery,
        timeout=LOCK_TIMEOUT,
    )


def _units_chart(rows: list[dict[str, Any]]) -> str:
    """The delivery's evidence units per entry and class (the page's one figure, `view.figure`)
    as horizontal stacked bars in HTML: one row per entry, one segment per class with units, its
    length proportional to the count, the count written in it and in its tooltip; a legend of the
    classes. Entry labels (recorded item ids) are escaped.

    HTML rather than a Plotly bar chart: the page then needs no Plotly in the browser (a new tab
    loads and starts Plotly's 4.6 MB bundle for this one small chart) and draws it in milliseconds."""
    order: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        entry = str(r["entry"])
        if entry not in counts:
            order.append(entry)
            counts[entry] = {}
        if int(r["units"]):
            counts[entry][str(r["class"])] = int(r["units"])
    widest = max([sum(c.values()) for c in counts.values()] + [1])
    out = []
    for entry in order:
        segs = "".join(
            f'<span title="{html_inline(entry)} · {html_inline(k)}: {n} unit{"s" if n != 1 else ""}" '
            f'style="flex:0 0 {100 * n / widest:.3f}%;background:{COLOURS.get(k, "gray")};{SEG_STYLE}">{n}</span>'
            for k, n in counts[entry].items()
        )
        total = sum(counts[entry].values())
        out.append(
            f'<div style="{ROW_STYLE}"><span style="{LABEL_STYLE}" title="{html_inline(entry)}">'
            f'{html_inline(entry)}</span><span style="display:flex;flex:1 1 auto">{segs or "&nbsp;"}</span>'
            f'<span style="flex:0 0 3.5em;text-align:right">{total}</span></div>'
        )
    legend = " ".join(
        f'<span><span style="display:inline-block;width:0.8em;height:0.8em;background:{c};'
        f'border-radius:0.15rem;margin-right:0.25em"></span>{html_inline(k)}</span>'
        for k, c in COLOURS.items()
    )
    return (
        f'<div class="memuse-units"><p style="{NOTE_STYLE}">Evidence units per delivered entry, by class '
        f"(bar length: units; total at the right)</p>{''.join(out)}"
        f'<p style="{NOTE_STYLE};display:flex;gap:1em;flex-wrap:wrap">{legend}</p></div>'
    )


ROW_STYLE = "display:flex;align-items:center;gap:0.5rem;margin:0.15rem 0;font-size:0.875rem"
LABEL_STYLE = "flex:0 0 14em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;text-align:right"
SEG_STYLE = (
    "color:white;text-align:center;font-size:0.75rem;line-height:1.4rem;min-width:1.2em;overflow:hidden"
)


st.title("MemTrim")

# -- widgets' requested state (a deep link ?delivery=… is taken once) --------------------------------
qd = st.query_params.get("delivery")
if qd and st.session_state.get("_mt_seen") != qd:
    st.session_state["mt_delivery"] = qd
    st.session_state["_mt_seen"] = qd
shared_episode = sel("episode")  # changed elsewhere (another page, a deep link): take it
if shared_episode and shared_episode != st.session_state.get("_mt_written"):
    st.session_state["mt_episode"] = shared_episode
runs = scope()
view_args = (
    db_key(),
    tuple(runs) if runs is not None else None,
    st.session_state.get("mt_episode"),
    st.session_state.get("mt_delivery"),
)
view = _view(*view_args)
if view.problem:
    st.warning(view.problem)
    st.stop()

# The inactive tab is not drawn (lazy tabs: picking one reruns the page, its view is cached): the
# corpus tab's three tables cost the browser time on every run while the reader looks at one delivery.
tab_one, tab_corpus = st.tabs(["One delivery", "Corpus"], key="mt_tab", on_change="rerun")
with tab_one:
    if not view.episodes:
        st.info("No episode with memory deliveries in this scope.")
    else:
        st.session_state["mt_episode"] = view.episode
        select_long("Episode", view.episodes, key="mt_episode", format_func=display_name)
        set_sel(episode=view.episode)
        st.session_state["_mt_written"] = view.episode
        labels = {d.delivery_id: d.label for d in view.deliveries}
        if view.delivery is not None:
            st.session_state["mt_delivery"] = view.delivery
            st.selectbox(
                "Delivery",
                list(labels),
                key="mt_delivery",
                format_func=lambda d: display_name(labels.get(d, d)),
            )
        w = view.whatif
        if view.whatif_problem:
            st.warning(view.whatif_problem)
        if w is not None:
            m1, m2, m3 = st.columns(3)
            m1.metric("Characters delivered", f"{w.chars_before:,}")
            m2.metric("After MemTrim", f"{w.chars_after:,}")
            m3.metric("Tokens saved (est.)", f"{w.tokens_saved:,}")
            st.caption(f"Prior context ({md_escape(w.prior_from)}): {md_escape(w.prior_help)}.")
            st.caption(
                " · ".join(
                    f":{COLOURS[k]}-background[{md_escape(k)}] {md_escape(v)}"
                    for k, v in view.unit_help.items()
                )
            )
            if view.figure:
                st.html(_units_chart(view.figure))
            left, right = st.columns(2)
            with left:
                st.markdown("**Delivered entries and MemTrim's decisions**")
                st.html(
                    '<div class="memuse-entries">'
                    + "".join(_entry_html(e, view.class_help) for e in w.entries)
                    + "</div>"
                )
            with right:
                st.markdown("**Prior context (the query)**")
                units = "<br>".join(f"{html_code(key)} = {html_inline(text)}" for key, text in w.query_units)
                st.html(
                    f'<div class="memuse-query" style="{SCROLL_STYLE}"><p style="{NOTE_STYLE}">'
                    f"{w.n_query_units:,} evidence units parsed from the prior context</p>"
                    + (f"<p>{units}</p>" if units else "")
                    + "</div>"
                )
                st.markdown("**Trimmed memory context**")
                show_text(w.context or "(nothing left)")
    write_url(episode=view.episode, delivery=view.delivery, span=None, step=None, item=None)

with tab_corpus:
    if tab_corpus.open:
        c = view.corpus
        if not c.computed:
            st.info(
                "Corpus view: not computed yet — run `memuse trim` to store MemTrim results for every delivery."
            )
        else:
            st.subheader("Tokens saved per configuration")
            st.dataframe(c.summary, hide_index=True, key="mt_summary")
            st.subheader("MemTrim classes vs the judge's novelty labels")
            if c.judged_entries:
                c1, c2, c3 = st.columns(3)
                c1.metric("Judged entries", c.judged_entries)
                c2.metric(
                    "Agreement on redundant", "—" if c.agreement is None else f"{100 * c.agreement:.1f}%"
                )
                pr = ["—" if v is None else f"{v:.2f}" for v in (c.precision, c.recall)]
                c3.metric("Precision / recall", f"{pr[0]} / {pr[1]}")
                st.dataframe(c.agreement_table, hide_index=True, key="mt_agreement")
            else:
                st.caption("No judged entries with MemTrim results yet.")
            st.subheader("Prior-context overlap (Jaccard) by use")
            if c.overlap:
                st.dataframe(c.overlap, hide_index=True, key="mt_overlap")
            else:
                st.caption("No judged entries with MemTrim results yet.")
