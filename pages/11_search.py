"""Search recorded text across the episodes in scope, or within one episode: every hit with its
episode, step and place, the match highlighted (recorded text escaped); pick a hit to read it in
the transcript."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import common
from memuse_core.views import search as search_view
from pages._shared import cached, go, md_code, scope, sel, write_url

st.title("Search")
# A deep link's ?q= wins once; otherwise the session's last query comes back after a visit to
# another page (Streamlit drops a widget's state on pages where it is not drawn).
if st.query_params.get("q") and st.session_state.get("_srch_url") != st.query_params["q"]:
    st.session_state["_srch_url"] = st.session_state["srch_q"] = st.query_params["q"]
elif "srch_q" not in st.session_state and st.session_state.get("_srch_last"):
    st.session_state["srch_q"] = st.session_state["_srch_last"]
query = st.text_input("Search tasks, responses, commands, tool output", key="srch_q")
st.session_state["_srch_last"] = query
current = sel("episode")
where = st.radio(
    "Where",
    ["All episodes in scope", "This episode"],
    key="srch_where",
    horizontal=True,
    disabled=current is None,
    help=f"This episode: {current}" if current else "Open an episode first.",
)
only = current if where == "This episode" and current else None
if not query:
    st.info(f"Type at least {search_view.MIN_QUERY} characters.")
    write_url(q=None)
    st.stop()
res = cached(search_view.search, query, scope(), only)
st.session_state["_srch_url"] = res.query
write_url(q=res.query)
if not len(res.hits):
    st.info(f"No hits for {md_code(res.query)}.")
    st.stop()
st.caption(
    f"{len(res.hits)} hits{f' (the first {search_view.HIT_LIMIT})' if res.truncated else ''} for "
    f"{md_code(res.query)}"
    + (f" in {md_code(only)}" if only else "")
    + ". Select a row to read it in the transcript."
)
ev = st.dataframe(
    common.display_table(res.hits.drop(columns=["match_at"])),
    hide_index=True,
    key="srch_hits",
    on_select="rerun",
    selection_mode="single-row",
)
if ev is not None and ev.selection.rows:
    ep, step = res.target(ev.selection.rows[0])
    go("transcript", episode=ep, step=step)
with st.container(key="srch_marked"):
    st.html(res.listing_html())
