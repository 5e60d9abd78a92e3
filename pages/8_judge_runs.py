"""Judge runs: progress over the span outcome classes, batches with cost, errors by reason and
follow-up statistics (MemUse A.4.1, A.6.8)."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import judge_runs as jr_view
from memuse_core.views.common import display_table, formatted
from memuse_core.wording import plural
from pages._shared import NOT_BUILT, cached, formatted_grid, from_url, scope, text_columns, url, write_url

st.title("Judge runs")
runs = scope()
jr = cached(jr_view.judge_runs, runs)
if jr.judgeable:
    st.progress(
        jr.done / jr.judgeable,
        text=f"{jr.done:,} of {jr.judgeable:,} judgeable spans have a verdict or an error ({jr.pending:,} pending)",
    )
st.subheader("Span outcome classes")
st.dataframe(
    [{"outcome class": c, "spans": n} for c, n in jr.classes.items()], hide_index=True, key="jr_classes"
)
if jr.recording_errors:
    st.caption(
        f"`error`: {plural(jr.recording_errors, 'span')} of episodes that failed a recording check (never sent to"
        f" a judge; the Span page names the failed check) and {plural(jr.judge_errors, 'span')} whose judge"
        " failed (counted in the batches' errors)."
    )
if not len(jr.batches):
    st.info(f"No judgments yet: {NOT_BUILT}.")
    st.stop()
st.subheader("Batches")
st.dataframe(
    formatted(jr.batches, jr_view.BATCH_FORMATS),
    hide_index=True,
    key="jr_batches",
    column_config=text_columns(jr_view.BATCH_FORMATS)
    | {"cost_usd": st.column_config.TextColumn("cost $", alignment="right")},
)
c1, c2, c3, c4 = st.columns(4)
c1.metric("Judgments", f"{int(jr.total('judgments')):,}")
c2.metric("Accepted", f"{int(jr.total('accepted')):,}")
c3.metric("Errors", f"{int(jr.total('errors')):,}")
cost = jr.cost_total()
c4.metric("Cost", "—" if cost is None else f"${cost:.4f}")
if runs is not None:
    st.caption(
        "Batches and these totals cover the whole store (a batch may judge spans of several runs); "
        "the progress above and the errors below follow the scope."
    )

from_url("batch", "jr_batch", options=jr.batch_ids)
bid = st.selectbox(
    "Batch", [None, *jr.batch_ids], key="jr_batch", format_func=lambda b: "all batches" if b is None else b
)
write_url(batch=bid)
detail = cached(jr_view.batch_detail, bid, runs)
st.subheader("Errors by reason")
if len(detail.errors):
    view = detail.errors.copy()
    view.insert(0, "example", [url("span", span=s) for s in view["example_span"]])
    st.dataframe(
        display_table(view),
        hide_index=True,
        key="jr_errors",
        column_config={"example": st.column_config.LinkColumn("example", display_text="inspect")},
    )
else:
    st.caption("No errors.")
st.subheader("Follow-ups and forced answers")
if detail.followups_chart is not None:
    st.plotly_chart(detail.followups_chart, key="jr_followups")
    st.dataframe(formatted(detail.followups, {}), hide_index=True, key="jr_followups_table")
st.subheader("Judge cost per configuration")
formatted_grid(detail.cost, jr_view.COST_FORMATS, key="jr_cost")
