"""Memory item lineage: search items, the item's history graph across episodes and runs with
verdict colours (MemUse A.4.3), every delivery with its outcome class and signals, and harmful
entries one click away."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import lineage as lin_view
from memuse_core.views.common import display_name, display_table, item_key, split_item
from pages._shared import (
    annotation_form,
    cached,
    md_code,
    md_escape,
    scope,
    seed,
    sel,
    set_sel,
    show_text,
    url,
    write_url,
)

st.title("Memory item lineage")
runs = scope()

harm = cached(lin_view.harmful_entries, runs)
if len(harm):
    with st.expander(f"Harmful entries ({len(harm)}) — drill into a harmful card", expanded=not sel("item")):
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
picked = st.selectbox("Item", keys, key="lin_item", format_func=lambda k: display_name(labels.get(k, k)))
set_sel(item=picked)
namespace, item_id = split_item(picked)

item = cached(lin_view.item, namespace, item_id)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Deliveries", f"{item.deliveries:,}", help="Restatements included.")
c2.metric("Episodes", f"{item.episodes:,}")
c3.metric("Acted on", item.acted_on, help="Entries with acted-on influence in current verdicts.")
c4.metric("Harmed", item.harmed)

st.subheader("History graph")
html = cached(lin_view.item_graph_html, namespace, item_id, runs)
if not html:
    st.info("This item has no recorded history graph in the selected runs.")
else:
    st.iframe(html, height=520)
    st.caption(
        "Item → versions → origin episode → deliveries → spans → verdicts; green improved, red harmed, "
        "grey unused; unobserved origins are marked (A.4.3)."
    )

st.subheader("Every delivery of this item")
st.caption(
    "One row per span-starting delivery (restatements are counted in `restatements`)"
    + (f" — first {lin_view.DELIVERY_LIMIT:,} shown." if item.truncated else ".")
)
if len(item.delivery_rows):
    view = item.delivery_rows.copy()
    view.insert(0, "span ", [url("span", span=s) if isinstance(s, str) else None for s in view["span_id"]])
    view.insert(
        1,
        "timeline",
        [
            url("timeline", episode=e, step=s if s == s else None)
            for e, s in zip(view["episode_id"], view["step"])
        ],
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
        st.markdown(
            f"**{md_escape(h.op)}** v{md_escape(h.version)} · origin episode "
            f"{md_code(h.episode_id or 'unobserved')} ({h.origin_outcome})"
        )
        if h.value:
            show_text(h.value, max_chars=3000)
else:
    st.caption("No recorded creation or update: the item's origin is unobserved (A.4.3).")

with st.expander("Annotate this item"):
    annotation_form("item", picked, None, key="lin")
write_url(item=picked, span=None, step=None, episode=None)
