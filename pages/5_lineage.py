"""Memory item lineage: harmful entries to start from, item search (harmful or beneficial use
first), the item's history graph with verdict colours (MemUse A.4.3) whose nodes open their item,
episode, step or span in place, every delivery with its outcome class and signals, and the
recorded changes with their origin episodes."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import lineage as lin_view
from memuse_core.views.common import display_name, display_table, item_key, judge_title, split_item
from pages._lineage_chart import lineage_chart
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
    url,
    view_judge,
    write_url,
)
from pages._widgets import lazy_expander

st.title("Memory item lineage")
runs = scope()
judge = view_judge()  # harmful/beneficial, colours and counts below read this one judge's verdicts

harm = cached(lin_view.harmful_entries, runs, judge=judge)


def harmful_table() -> None:
    """The harmful entries, each row a link to its item's lineage and its span; selecting a row
    draws that item."""
    view = harm.copy()
    view.insert(
        0,
        "drill",
        [url("lineage", item=item_key(n, i)) for n, i in zip(view["namespace"], view["item_id"])],
    )
    view.insert(1, "span ", [url("span", span=s) for s in view["span_id"]])
    ev = st.dataframe(
        display_table(view),
        hide_index=True,
        key="lin_harm",
        on_select="rerun",
        selection_mode="single-row",
        column_config={
            "drill": st.column_config.LinkColumn("drill", display_text="lineage"),
            "span ": st.column_config.LinkColumn("span", display_text="inspect"),
        },
    )
    if ev is not None and ev.selection.rows:
        r = view.iloc[ev.selection.rows[0]]
        set_sel(item=item_key(r["namespace"], r["item_id"]))


if len(harm):
    # drawn only while open: a closed expander's grid still costs the browser on every run
    with lazy_expander(
        f"{judge_title(f'Harmful entries ({len(harm)})', judge)}: select one to draw its item",
        "lin_harm_open",
        expanded=not sel("item"),
    ) as harm_shown:
        if harm_shown:
            harmful_table()

search = st.text_input("Search items (id, display key or namespace)", key="lin_query")
choices = cached(lin_view.item_choices, search or "", judge=judge)
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
    judge_title("Item (items with harmful, then beneficial use first)", judge),
    keys,
    key="lin_item",
    format_func=lambda k: display_name(labels.get(k, k)),
)
set_sel(item=picked)
namespace, item_id = split_item(picked)

item = cached(lin_view.item, namespace, item_id, judge)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Deliveries", f"{item.deliveries:,}", help="Restatements included.")
c2.metric("Episodes", f"{item.episodes:,}")
c3.metric("Acted on", item.acted_on, help="Entries of current verdicts with acted-on influence.")
c4.metric("Harmed", item.harmed, help="Acted-on entries of current verdicts whose observed effect harmed.")

st.subheader(judge_title("History graph", judge))
show_all = bool(st.session_state.get("lin_all"))
graph = cached(lin_view.item_graph, namespace, item_id, runs, show_all, judge)
if graph.drawing is None:
    st.info("This item has no recorded history graph in the selected runs.")
else:
    if graph.focused or show_all:
        st.toggle(
            f"Show all {graph.spans_total:,} spans (drawn: {graph.spans_shown:,}, the most consequential first)",
            key="lin_all",
        )
    clicked = lineage_chart(graph.drawing, key="lin_graph")
    st.caption(graph.caption)
    target = lin_view.node_target(clicked)
    if target is not None and target.params != {"item": picked}:
        go(target.page, **target.params)

st.subheader(judge_title("Every delivery of this item", judge))
st.caption(
    "One row per span-starting delivery (restatements are counted in `restatements`); its links open "
    "the span or the step" + (f" — first {lin_view.DELIVERY_LIMIT:,} shown." if item.truncated else ".")
)
if len(item.delivery_rows):
    view = item.delivery_rows.copy()
    view.insert(0, "span ", [url("span", span=s) if isinstance(s, str) else None for s in view["span_id"]])
    view.insert(
        1,
        "timeline",
        [url("timeline", episode=e, step=s) for e, s in zip(view["episode_id"], item.delivery_steps())],
    )
    st.dataframe(
        display_table(view),
        hide_index=True,
        key="lin_dels",
        column_config={
            "span ": st.column_config.LinkColumn("span", display_text="inspect"),
            "timeline": st.column_config.LinkColumn("timeline", display_text="open"),
        },
    )
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
