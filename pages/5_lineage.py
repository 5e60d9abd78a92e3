"""Memory item lineage: harmful entries to start from, item search (harmful or beneficial use
first), the item's history graph with verdict colours (MemUse A.4.3) whose nodes open their item,
episode, step or span in place, every delivery with its outcome class and signals, and the
recorded changes with their origin episodes."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import lineage as lin_view
from memuse_core.views.common import item_key, split_item
from pages._shared import (
    annotation_form,
    cached,
    go,
    link,
    md_code,
    md_escape,
    scope,
    seed,
    sel,
    set_sel,
    show_text,
    write_url,
)

st.title("Memory item lineage")
runs = scope()

harm = cached(lin_view.harmful_entries, runs)
if len(harm):
    with st.expander(f"Harmful entries ({len(harm)}): select one to draw its item", expanded=not sel("item")):
        ev = st.dataframe(
            harm, hide_index=True, key="lin_harm", on_select="rerun", selection_mode="single-row"
        )
        if ev is not None and ev.selection.rows:
            r = harm.iloc[ev.selection.rows[0]]
            set_sel(item=item_key(r["namespace"], r["item_id"]))
            link("span", f"Open span {md_escape(r['span_id'])} →", span=r["span_id"])

search = st.text_input("Search items (id, display key or namespace)", key="lin_query")
choices = cached(lin_view.item_choices, search or "")
if not choices:
    st.info("No delivered items match.")
    st.stop()
labels = {c.key: c.label for c in choices}
keys = list(labels)
cur = sel("item")
if cur and cur not in keys:
    keys.insert(0, cur)
if not cur:
    set_sel(item=keys[0])
seed("lin_item", "item")
if st.session_state.get("lin_item") not in keys:
    st.session_state["lin_item"] = keys[0]
picked = st.selectbox(
    "Item (items with harmful, then beneficial use first)",
    keys,
    key="lin_item",
    format_func=lambda k: labels.get(k, k),
)
set_sel(item=picked)
namespace, item_id = split_item(picked)

item = cached(lin_view.item, namespace, item_id)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Deliveries", f"{item.deliveries:,}", help="Restatements included.")
c2.metric("Episodes", f"{item.episodes:,}")
c3.metric("Acted on", item.acted_on, help="Entries of current verdicts with acted-on influence.")
c4.metric("Harmed", item.harmed, help="Acted-on entries of current verdicts whose observed effect harmed.")

st.subheader("History graph")
show_all = bool(st.session_state.get("lin_all"))
graph = cached(lin_view.item_graph, namespace, item_id, runs, show_all)
if graph.figure is None:
    st.info("This item has no recorded history graph in the selected runs.")
else:
    if graph.focused or show_all:
        st.toggle(
            f"Show all {graph.spans_total:,} spans (drawn: {graph.spans_shown:,}, the most consequential first)",
            key="lin_all",
        )
    clicked = st.plotly_chart(graph.figure, key="lin_graph", on_select="rerun", selection_mode="points")
    st.caption(graph.caption)
    target = lin_view.node_target(clicked.selection.points if clicked is not None else [])
    if target is not None and target.params != {"item": picked}:
        go(target.page, **target.params)

st.subheader("Every delivery of this item")
st.caption(
    "One row per span-starting delivery (restatements are counted in `restatements`); select a row to "
    "open its span or step" + (f" — first {lin_view.DELIVERY_LIMIT:,} shown." if item.truncated else ".")
)
if len(item.delivery_rows):
    ev = st.dataframe(
        item.delivery_rows, hide_index=True, key="lin_dels", on_select="rerun", selection_mode="single-row"
    )
    if ev is not None and ev.selection.rows:
        row = item.delivery_rows.iloc[ev.selection.rows[0]]
        step = row["step"]
        link(
            "timeline",
            "Open its step in the timeline →",
            episode=row["episode_id"],
            step=None if step != step else int(step),
        )
        if isinstance(row["span_id"], str):
            link("span", "Open its span →", span=row["span_id"])
st.subheader("Recorded changes")
if item.changes:
    for h in item.changes:
        st.markdown(f"**{md_escape(h.op)}** v{md_escape(h.version or '—')}")
        if h.episode_id:
            link(
                "timeline",
                f"Origin episode {md_escape(h.episode_id)} ({h.origin_outcome}) →",
                episode=h.episode_id,
            )
        else:
            st.caption("Origin episode: unobserved (no episode recorded this write, A.4.3).")
        if h.value:
            show_text(h.value, max_chars=3000)
else:
    st.caption("No recorded creation or update: the item's origin is unobserved (A.4.3).")

with st.expander("Annotate this item"):
    annotation_form("item", picked, None, key="lin")
st.caption(
    "An offline, interactive copy of the whole graph: "
    + md_code(f"memuse lineage --item {namespace}/{item_id}")
)
write_url(item=picked, span=None, step=None, episode=None)
