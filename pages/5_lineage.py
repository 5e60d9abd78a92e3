"""Memory item lineage: search items, the item's history graph across episodes and runs with
verdict colours (MemUse A.4.3), every delivery with its verdicts, and harmful entries one click
away."""

from __future__ import annotations

import streamlit as st

from pages._shared import (
    LOCK_TIMEOUT,
    annotation_form,
    db_key,
    item_key,
    md_code,
    md_escape,
    q,
    scope,
    seed,
    sel,
    set_sel,
    show_text,
    split_item,
    url,
    write_url,
)


@st.cache_data(ttl=600, max_entries=64, show_spinner=False)
def lineage_html(
    key: tuple[str, float, float], namespace: str, item_id: str, runs: tuple[str, ...] | None
) -> str | None:
    """The item's pyvis graph as offline HTML ("" when the item has no graph; None while the
    lineage module is not available)."""
    try:
        from memuse_core.lineage import item_graph_html
    except ImportError:
        return None
    from memuse_core.store import connect

    con = connect(key[0], read_only=True, timeout=LOCK_TIMEOUT)
    try:
        return item_graph_html(con, namespace, item_id, runs=list(runs) if runs else None) or ""
    finally:
        con.close()


st.title("Memory item lineage")
runs = scope()

harm = q("harmful_entries", runs)
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
            view,
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
items = q("search_items", search or "", 200)
if not len(items):
    st.info("No delivered items match.")
    st.stop()
keys = [item_key(n, i) for n, i in zip(items["namespace"], items["item_id"])]
cur = sel("item")
if cur and cur not in keys:
    keys.insert(0, cur)
if not cur:
    set_sel(item=keys[0])
seed("lin_item", "item")
if st.session_state.get("lin_item") not in keys:
    st.session_state["lin_item"] = keys[0]
labels = {
    item_key(n, i): f"{i} · {n} · {d} deliveries in {e} episodes"
    for n, i, d, e in zip(items["namespace"], items["item_id"], items["deliveries"], items["episodes"])
}
picked = st.selectbox("Item", keys, key="lin_item", format_func=lambda k: labels.get(k, k))
set_sel(item=picked)
namespace, item_id = split_item(picked)

dels = q("item_deliveries", namespace, item_id)
hist = q("item_history", namespace, item_id)
counts = q("item_counts", namespace, item_id)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Deliveries", f"{counts['deliveries']:,}", help="Restatements included.")
c2.metric("Episodes", f"{counts['episodes']:,}")
c3.metric("Acted on", counts["acted_on"], help="Entries with acted-on influence in current verdicts.")
c4.metric("Harmed", counts["harmed"])

st.subheader("History graph")
html = lineage_html(db_key(), namespace, item_id, tuple(runs) if runs else None)
if html is None:
    st.info("Lineage graph: not available yet (the memory-graph module is missing).")
elif not html:
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
    + (" — first 2,000 shown." if len(dels) >= 2000 else ".")
)
if len(dels):
    view = dels.copy()
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
        view,
        hide_index=True,
        key="lin_dels",
        column_config={
            "span ": st.column_config.LinkColumn("span", display_text="inspect"),
            "timeline": st.column_config.LinkColumn("timeline", display_text="open"),
        },
    )
st.subheader("Recorded changes")
if len(hist):
    for _, h in hist.iterrows():
        st.markdown(
            f"**{md_escape(h['op'])}** v{md_escape(h['version'])} · origin episode "
            f"{md_code(h['episode_id'] or 'unobserved')} ({h['origin_outcome']})"
        )
        if h["value"]:
            show_text(h["value"], max_chars=3000)
else:
    st.caption("No recorded creation or update: the item's origin is unobserved (A.4.3).")

with st.expander("Annotate this item"):
    annotation_form("item", picked, None, key="lin")
write_url(item=picked, span=None, step=None, episode=None)
