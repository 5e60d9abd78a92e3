"""Judge runs: batches with progress, cost, errors by reason and follow-up statistics (MemUse A.6.8)."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from pages._shared import NOT_BUILT, q, url

st.title("Judge runs")
batches = q("judge_batches")
counts = q("outcome_counts", None)
eligible = (
    int(
        counts[
            counts["outcome"].isin(["positive", "negative", "unresolved", "neutral", "unjudged", "error"])
        ]["spans"].sum()
    )
    if len(counts)
    else 0
)
unjudged = int(counts[counts["outcome"] == "unjudged"]["spans"].sum()) if len(counts) else 0
if eligible:
    done = eligible - unjudged
    st.progress(
        done / eligible,
        text=f"{done:,} of {eligible:,} judgeable spans have a verdict or an error ({unjudged:,} pending)",
    )
if not len(batches):
    st.info(f"No judgments yet: {NOT_BUILT}.")
    st.stop()
st.subheader("Batches")
st.dataframe(
    batches,
    hide_index=True,
    key="jr_batches",
    column_config={
        "cost_usd": st.column_config.NumberColumn("cost $", format="%.4f"),
        "mean_followups": st.column_config.NumberColumn(format="%.2f"),
    },
)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Judgments", f"{int(batches['judgments'].sum()):,}")
c2.metric("Accepted", f"{int(batches['accepted'].sum()):,}")
c3.metric("Errors", f"{int(batches['errors'].sum()):,}")
c4.metric("Cost", f"${float(batches['cost_usd'].fillna(0).sum()):.4f}")

qb = st.query_params.get("batch")
if qb in list(batches["batch_id"]) and st.session_state.get("_jr_seen") != qb:
    st.session_state["_jr_seen"] = qb
    st.session_state["jr_batch"] = qb
bid = st.selectbox(
    "Batch",
    [None] + list(batches["batch_id"]),
    key="jr_batch",
    format_func=lambda b: "all batches" if b is None else b,
)
if bid:
    st.query_params["batch"] = bid
    st.session_state["_jr_seen"] = bid
elif "batch" in st.query_params:
    del st.query_params["batch"]
st.subheader("Errors by reason")
err = q("judge_errors", bid)
if len(err):
    view = err.copy()
    view.insert(0, "example", [url("span", span=s) for s in view["example_span"]])
    st.dataframe(
        view,
        hide_index=True,
        key="jr_errors",
        column_config={"example": st.column_config.LinkColumn("example", display_text="inspect")},
    )
else:
    st.caption("No errors.")
st.subheader("Follow-ups and forced answers")
fu = q("judge_followups", bid)
if len(fu):
    fig = px.bar(
        fu.astype({"followups": str}),
        x="followups",
        y="judgments",
        color="status",
        barmode="stack",
        labels={"followups": "follow-ups (rejected answers sent back)"},
    )
    fig.update_xaxes(type="category")
    st.plotly_chart(fig, key="jr_followups")
    st.dataframe(fu, hide_index=True, key="jr_followups_table")
st.subheader("Judge cost per configuration")
st.dataframe(q("judge_cost", None), hide_index=True, key="jr_cost")
