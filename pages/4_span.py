"""Span inspector: exposed text beside the prior context, the entry table with the five signals,
rationales with clickable citations, the judge transcript and history, and one-click re-judging."""

from __future__ import annotations

import os
import re

import pandas as pd
import streamlit as st

from memuse_core import charts as TL  # the aggregate charts (the episode timeline is `timeline`)
from pages._shared import (
    NOT_BUILT,
    annotation_form,
    db_path,
    item_key,
    link,
    md_code,
    md_escape,
    q,
    seed,
    sel,
    set_sel,
    show_text,
    url,
    write_url,
)

CITE = re.compile(r"\[([SP])(\d+)\]")


def render_cited(text: str, span_id: str, key: str) -> list[str]:
    """Recorded rationale text, escaped, with every [S7] / [P3] turned into a deep link."""
    found = []
    out, last = [], 0
    for m in CITE.finditer(text or ""):
        out.append(md_escape(text[last : m.start()]))
        kind, n = m.group(1), m.group(2)
        found.append(f"{kind}{n}")
        param = "step" if kind == "S" else "source"
        out.append(f"[\\[{kind}{n}\\]]({url('span', span=span_id, **{param: n})})")
        last = m.end()
    out.append(md_escape((text or "")[last:]))
    st.markdown("".join(out))
    return found


def highlighted(text: str, prior_texts: list[str]) -> str:
    """Markdown of recorded text with lines also present in the prior context highlighted."""
    lines = []
    for line, shared in TL.shared_lines(text, prior_texts):
        esc = md_escape(line) or "&#8203;"
        lines.append(f":orange-background[{esc}]" if shared else esc)
    return "  \n".join(lines)


st.title("Span inspector")
qp_source = st.query_params.get("source")
if qp_source and st.session_state.get("_sp_src_seen") != qp_source:
    st.session_state["_sp_src_seen"] = qp_source
    st.session_state["sp_cite"] = f"P{qp_source}"
qp_step = st.query_params.get("step")
if qp_step and st.session_state.get("_sp_step_seen") != qp_step:
    st.session_state["_sp_step_seen"] = qp_step
    st.session_state["sp_cite"] = f"S{qp_step}"

episode = sel("episode")
choices: list[str] = []
if episode:
    eps = q("episode_spans", episode)
    choices = list(eps["span_id"]) if len(eps) else []
seed("sp_span", "span")
if not st.session_state.get("sp_span") and choices:
    st.session_state["sp_span"] = choices[0]
c1, c2 = st.columns([2, 3])
span_id = c1.text_input("Span id", key="sp_span", help="`<episode_id>/<first delivery_id>`")
if choices:
    pick = c2.selectbox(
        "Spans of the selected episode",
        [None] + choices,
        key="sp_pick",
        format_func=lambda s: "—" if s is None else s,
    )
    if pick and pick != span_id and st.session_state.get("_sp_last_pick") != pick:
        st.session_state["_sp_last_pick"] = pick
        set_sel(span=pick)
        st.session_state["_seed_sp_span"] = None
        st.rerun()
if not span_id:
    st.info("Pick a span: paste its id, or choose an episode on the Timeline page first. " + NOT_BUILT)
    st.stop()
span = q("span_row", span_id)
if span is None:
    st.warning(f"Span {span_id!r} is not in the database ({NOT_BUILT}).")
    st.stop()
set_sel(span=span_id, episode=span["episode_id"])

triage = span.get("triage") or ("unjudged" if span["status"] == "eligible" else span["status"])
st.markdown(
    f"**{md_escape(span_id)}** · status `{span['status']}` · triage **{triage}** · steps "
    f"{span['first_step']}–{span['last_step']} · form {md_code(span['form'])} · route `{span['route']}` · "
    f"{span['n_entries']} entries · {span['restatements']} restatements · ≈{span['est_tokens']} tokens"
    + (f" · reason: {md_escape(span['reason'])}" if span.get("reason") else "")
)
lc1, lc2, _ = st.columns([1, 1, 3])
with lc1:
    link("timeline", "Open in timeline", episode=span["episode_id"], step=span["first_step"])
with lc2:
    link("cases", "Case studies")

# ---- Exposed text beside the prior context -------------------------------------------------
placements = q("span_placements", span_id)
prior = q("span_prior_sources", span_id)
prior_texts = list(prior["text"]) if len(prior) else []
st.subheader("Exposed text and prior context")
st.caption("Lines of the delivered memory that the agent could already see are highlighted (MemUse 3.3).")
left, right = st.columns(2)
with left:
    st.markdown("**Target delivery (verbatim placements)**")
    for _, p in placements.iterrows():
        st.caption(f"placement {p['pos']} · {p['slot']} · {p['kind']} · message {p['message_index']}")
        if p["text"] is None:
            st.caption(f"(redacted, {p['size']} chars)")
        else:
            with st.container(height=320):
                st.markdown(highlighted(p["text"], prior_texts))
with right:
    st.markdown("**Prior context B_S (target cut out)**")
    if not len(prior):
        st.info(f"Prior context: {NOT_BUILT}.")
    with st.container(height=420):
        for _, s in prior.iterrows():
            st.markdown(
                f"**[P{s['pos']}]** {md_escape(s['role'])} · message {s['message_index']} · {s['chars']} chars"
            )
            show_text(s["text"], max_chars=4000)

# ---- Entries and signals --------------------------------------------------------------------
st.subheader("Entries, signals and usage labels")
entries = q("span_entries", span_id)
judgments = q("span_judgments", span_id)
current = span.get("verdict_judgment")
assess = q("judgment_assessments", current) if current else pd.DataFrame()
table = entries[["pos", "namespace", "item_id", "exposure", "window_start", "window_end"]].copy()
if len(assess):
    table = table.merge(assess.drop(columns=["item_id"]), on="pos", how="left")
    table["lineage"] = [
        url("lineage", item=item_key(ns, iid)) for ns, iid in zip(table["namespace"], table["item_id"])
    ]
    st.dataframe(
        table.drop(columns=["notes"]),
        hide_index=True,
        key="sp_entries",
        column_config={"lineage": st.column_config.LinkColumn("item history", display_text="lineage")},
    )
else:
    st.dataframe(table, hide_index=True, key="sp_entries")
    st.info("No accepted judgment for this span yet — run `memuse judge` or use Re-judge below.")
with st.expander("Exposed text of each entry"):
    for _, e in entries.iterrows():
        st.markdown(f"**#{e['pos']}** {md_code(e['item_id'])} · {e['exposure']}")
        show_text(
            e["exposed_text"] if e["exposed_text"] is not None else "(unknown exposure)", max_chars=4000
        )

# ---- Rationales with clickable citations ----------------------------------------------------
cites: list[str] = []
if len(assess):
    st.subheader("Rationales")
    jrow = judgments[judgments["judgment_id"] == current]
    if len(jrow) and jrow.iloc[0]["summary"]:
        st.markdown("**Span summary**")
        cites += render_cited(str(jrow.iloc[0]["summary"]), span_id, "sum")
    for _, a in assess.iterrows():
        if a.get("usage_label") == "misused" or a.get("effect") == "harmed":
            st.markdown(f"**#{a['pos']}** {md_code(a['item_id'])} · :red[harmed]")
            ns = entries.set_index("pos")["namespace"].get(int(a["pos"]), "default")
            link("lineage", "Drill into this harmful item", item=item_key(ns, a["item_id"]))
        else:
            st.markdown(f"**#{a['pos']}** {md_code(a['item_id'])} · {a.get('usage_label') or '—'}")
        ev = [f"S{int(x)}" for x in (a.get("evidence") if a.get("evidence") is not None else [])]
        an = [f"S{int(x)}" for x in (a.get("anchors") if a.get("anchors") is not None else [])]
        cites += render_cited(str(a.get("notes") or ""), span_id, f"n{a['pos']}") + an + ev
cites = list(dict.fromkeys(cites))
if cites or st.session_state.get("sp_cite"):
    st.markdown("**Cited evidence** — pick a citation to read it here")
    opts = (
        cites
        if st.session_state.get("sp_cite") in cites or not st.session_state.get("sp_cite")
        else [st.session_state["sp_cite"]] + cites
    )
    cite = st.pills("Citations", opts, key="sp_cite", label_visibility="collapsed")
    if cite:
        kind, n = cite[0], int(cite[1:])
        if kind == "S":
            set_sel(step=n)
            txt = q("step_text", span["episode_id"], n)
            if txt is None:
                st.warning(f"Step {n} not found.")
            else:
                with st.container(border=True, key="sp_cited_step"):
                    st.markdown(f"**S{n}** · {md_code(txt['tools'] or '—')} · exit {txt['exit_code']}")
                    show_text(txt["response"], max_chars=6000)
                    for name, args in txt["tool_calls"]:
                        show_text(f"{name}: {args}", max_chars=3000)
                    for r in txt["results"]:
                        show_text(r["output"], max_chars=6000)
                link("timeline", f"Open S{n} in the timeline", episode=span["episode_id"], step=n)
        else:
            row = prior[prior["pos"] == n]
            with st.container(border=True, key="sp_cited_source"):
                if len(row):
                    st.markdown(
                        f"**[P{n}]** {md_escape(row.iloc[0]['role'])} · message {row.iloc[0]['message_index']}"
                    )
                    show_text(row.iloc[0]["text"])
                else:
                    st.warning(f"Prior source P{n} not found.")

# ---- Judge transcript and history -----------------------------------------------------------
st.subheader("Judgment history")
if not len(judgments):
    st.info("Never judged.")
else:
    st.dataframe(judgments, hide_index=True, key="sp_history")
    jid = st.selectbox(
        "Judgment",
        list(judgments["judgment_id"]),
        key="sp_judgment",
        format_func=lambda j: (
            f"{j} ({judgments.set_index('judgment_id').loc[j, 'judge']}, "
            f"{judgments.set_index('judgment_id').loc[j, 'status']})"
        ),
    )
    det = q("judgment_detail", jid)
    if det:
        attempts = det.get("attempts") or []
        st.markdown(
            f"**Validation attempts**: {len(attempts)} · follow-ups {det.get('followups')} · "
            f"forced {det.get('forced')} · calls {det.get('calls')}"
        )
        for i, att in enumerate(attempts if isinstance(attempts, list) else []):
            ok = att.get("accepted") if isinstance(att, dict) else None
            with st.expander(
                f"Attempt {i + 1}: {'accepted' if ok else 'rejected'}"
                + (" (forced)" if isinstance(att, dict) and att.get("forced") else "")
            ):
                for v in (att.get("violations") or []) if isinstance(att, dict) else []:
                    st.markdown("- " + md_escape(v.get("message", v) if isinstance(v, dict) else v))
                if isinstance(att, dict) and att.get("coerced"):
                    st.markdown("Set to undetermined: " + md_escape(", ".join(map(str, att["coerced"]))))
        tr = det.get("transcript") or []
        with st.expander(f"Transcript ({len(tr) if isinstance(tr, list) else 0} messages)"):
            for m in tr if isinstance(tr, list) else []:
                if not isinstance(m, dict):
                    show_text(m)
                    continue
                st.markdown(
                    f"**{md_escape(m.get('role', '?'))}**"
                    + (f" · tool {md_code(m.get('name'))}" if m.get("name") else "")
                )
                if m.get("content"):
                    show_text(
                        m["content"] if isinstance(m["content"], str) else str(m["content"]), max_chars=8000
                    )
                for tc in m.get("tool_calls") or []:
                    fn = tc.get("function", tc) if isinstance(tc, dict) else {}
                    show_text(f"{fn.get('name', '')}({fn.get('arguments', '')})", max_chars=4000)

# ---- Re-judge ------------------------------------------------------------------------------
with st.sidebar:
    st.markdown("**Re-judge settings**")
    st.radio(
        "Judge",
        ["rules", "llm"],
        key="judge_kind",
        horizontal=True,
        help="rules: the deterministic offline judge; llm: any OpenAI-compatible endpoint.",
    )
    if st.session_state["judge_kind"] == "llm":
        st.text_input("Model", key="judge_model")
        st.text_input("Endpoint base URL", key="judge_base_url", placeholder="https://api.openai.com/v1")
        st.caption(
            "The API key is read from OPENAI_API_KEY "
            + ("(set)." if os.environ.get("OPENAI_API_KEY") else "(not set).")
        )

st.subheader("Re-judge this span")
if span["status"] != "eligible":
    st.caption(f"Only eligible spans are judged (this one is {span['status']}).")
elif st.button(f"Re-judge with the {st.session_state['judge_kind']} judge", key="sp_rejudge", type="primary"):
    try:
        from memuse_core.judge.runner import judge_span
    except ImportError:
        judge_span = None
    if judge_span is None:
        st.info("The judge is not available yet — run `memuse judge` when it is.")
    else:
        old = assess.copy()
        kind = st.session_state["judge_kind"]
        kwargs = {}
        if kind == "llm":
            kwargs = {
                "model": st.session_state.get("judge_model") or None,
                "base_url": st.session_state.get("judge_base_url") or None,
            }
        bar = st.progress(0.0, text="Judging…")
        try:
            with st.spinner("Judging…"):
                res = judge_span(db_path(), span_id, judge=kind, **kwargs)
            bar.progress(1.0, text="Done.")
            st.session_state["sp_rejudged"] = {
                "span": span_id,
                "old": old.to_dict("records"),
                "judgment": getattr(res, "judgment_id", None),
                "status": getattr(res, "status", None),
                "reason": getattr(res, "reason", None),
            }
        except Exception as e:  # the judge reports user-facing problems as exceptions
            bar.empty()
            st.error(f"Re-judge failed: {e}")
done = st.session_state.get("sp_rejudged")
if done and done.get("span") == span_id:
    st.success(
        f"New judgment {done['judgment']}: {done['status']}"
        + (f" ({done['reason']})" if done.get("reason") else "")
    )
    cols = ["pos", "relevance", "accuracy", "novelty", "influence", "effect", "usage_label"]
    new = q("judgment_assessments", done["judgment"]) if done.get("judgment") else pd.DataFrame()
    o, n = st.columns(2)
    o.markdown("**Before**")
    o.dataframe(
        pd.DataFrame(done["old"])[cols] if done["old"] else pd.DataFrame(columns=cols),
        hide_index=True,
        key="sp_old",
    )
    n.markdown("**After**")
    n.dataframe(new[cols] if len(new) else pd.DataFrame(columns=cols), hide_index=True, key="sp_new")

with st.expander("Annotate this span"):
    annotation_form("span", span_id, span["episode_id"], key="sp")
_cite = st.session_state.get("sp_cite") or ""
write_url(
    span=span_id,
    episode=span["episode_id"],
    item=None,
    step=_cite[1:] if _cite.startswith("S") else None,
    source=_cite[1:] if _cite.startswith("P") else None,
)
