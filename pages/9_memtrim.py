"""MemTrim what-if: for any recorded delivery, the evidence units MemTrim would keep or remove
(shared with the prior context, conflicting, memory-only), its outcome decision and the trimmed
text; across the corpus, tokens saved and agreement with the judge's redundant novelty labels
(MemTrim 3.3, A.1 applied to MemUse deliveries)."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

from pages._shared import md_code, md_escape, q, q_or_empty, scope, seed, sel, set_sel, show_text, write_url

CLASS_COLOUR = {"shared": "orange", "conflicting": "red", "memory_only": "green"}

st.title("MemTrim")
tab_one, tab_corpus = st.tabs(["One delivery", "Corpus"])

with tab_one:
    ids = list(q("episode_ids", scope(), True))
    cur = sel("episode")
    if cur and cur not in ids:
        ids.insert(0, cur)
    if not ids:
        st.info("No episodes in this scope.")
    else:
        if cur is None:
            set_sel(episode=ids[0])
        seed("mt_episode", "episode")
        if st.session_state.get("mt_episode") not in ids:
            st.session_state["mt_episode"] = ids[0]
        episode_id = st.selectbox("Episode", ids, key="mt_episode")
        set_sel(episode=episode_id)
        dels = q("episode_deliveries", episode_id)
        if not len(dels):
            st.info("This episode has no deliveries.")
        else:
            labels = {
                r[
                    "delivery_id"
                ]: f"{r['delivery_id']} · S{r['step'] if r['step'] == r['step'] else '?'} · {r['form']} · "
                f"{r['n_entries']} entries"
                for _, r in dels.iterrows()
            }
            qd = st.query_params.get("delivery")
            if qd in labels and st.session_state.get("_mt_seen") != qd:
                st.session_state["mt_delivery"] = qd
                st.session_state["_mt_seen"] = qd
            if st.session_state.get("mt_delivery") not in labels:
                st.session_state["mt_delivery"] = next(iter(labels))
            did = st.selectbox("Delivery", list(labels), key="mt_delivery", format_func=lambda d: labels[d])
            try:
                w = q("whatif.delivery", did)
            except KeyError as e:
                st.warning(str(e))
                w = None
            if w is not None:
                before = sum(e["chars_before"] for e in w["entries"])
                after = sum(e["chars_after"] for e in w["entries"])
                m1, m2, m3 = st.columns(3)
                m1.metric("Characters delivered", f"{before:,}")
                m2.metric("After MemTrim", f"{after:,}")
                m3.metric("Tokens saved (est.)", f"{max(0, before - after) // 4:,}")
                st.caption(
                    f"Prior context from: {w['prior_from']}. Legend: :orange-background[shared with the prior "
                    "context] :red-background[conflicting (the query wins)] :green-background[memory-only (kept)]"
                )
                left, right = st.columns(2)
                with left:
                    st.markdown("**Delivered entries, units by class**")
                    for e in w["entries"]:
                        with st.container(border=True):
                            st.markdown(
                                f"**#{e['pos']}** {md_code(e['item_id'])} · class **{e['class']}** · "
                                f"outcome **{md_escape(e['outcome'])}** · Jaccard {e['jaccard']:.2f}"
                            )
                            if e.get("reason"):
                                st.caption(md_escape(e["reason"]))
                            for cls, colour in CLASS_COLOUR.items():
                                for u in e.get(cls, []):
                                    st.markdown(
                                        f":{colour}-background[{md_escape(u.get('source') or u.get('text'))}] "
                                        f"· {md_code(u.get('key'))}"
                                    )
                            for u in e.get("withheld", []):
                                st.markdown(
                                    f"~~{md_escape(u.get('source') or u.get('text'))}~~ · withheld (retrieved memories disagree)"
                                )
                with right:
                    st.markdown("**Prior context (the query)**")
                    with st.container(height=380):
                        st.caption(f"{len(w['query_units'])} evidence units parsed from the prior context")
                        for u in w["query_units"][:200]:
                            st.markdown(
                                f"{md_code(u.get('key'))} = {md_escape(u.get('text') or u.get('value'))}"
                            )
                    st.markdown("**Trimmed memory context**")
                    show_text(w["context"] or "(nothing left)")
    write_url(
        episode=sel("episode"), delivery=st.session_state.get("mt_delivery"), span=None, step=None, item=None
    )

with tab_corpus:
    summ = q_or_empty("trim.trim_summary")
    if summ is None or not len(summ):
        st.info(
            "Corpus view: not computed yet — run `memuse trim` to store MemTrim results for every delivery."
        )
    else:
        st.subheader("Tokens saved per configuration")
        st.dataframe(
            summ,
            hide_index=True,
            key="mt_summary",
            column_config={"saved_share": st.column_config.NumberColumn(format="percent")},
        )
        st.plotly_chart(px.bar(summ, x="config", y="tokens_saved", title=None), key="mt_saved")
        agr = q("trim.novelty_agreement")
        st.subheader("MemTrim shared vs the judge's redundant novelty")
        if agr["n"]:
            c1, c2, c3 = st.columns(3)
            c1.metric("Judged entries", agr["n"])
            c2.metric("Agreement on redundant", f"{100 * agr['agreement']:.1f}%")
            c3.metric(
                "Precision / recall",
                f"{agr['precision'] if agr['precision'] is None else round(agr['precision'], 2)} / "
                f"{agr['recall'] if agr['recall'] is None else round(agr['recall'], 2)}",
            )
            st.dataframe(
                agr["table"].pivot_table(index="memtrim_class", columns="novelty", values="n", fill_value=0),
                key="mt_agreement",
            )
        else:
            st.caption("No judged entries with MemTrim results yet.")
        ov = q("trim.overlap_by_usage")
        st.subheader("Prior-context overlap (Jaccard) by use")
        if len(ov):
            st.plotly_chart(
                px.box(pd.DataFrame(ov), x="group", y="jaccard", color="config", points="outliers"),
                key="mt_overlap",
            )
        else:
            st.caption("No judged entries with MemTrim results yet.")
