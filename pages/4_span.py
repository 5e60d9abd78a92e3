"""Span inspector: exposed text beside the prior context, the entry table with the five signals,
rationales with clickable citations, the judge transcript and history, and one-click re-judging."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import common
from memuse_core.views import episode_facts as ep_facts
from memuse_core.views import judgment as judgment_view
from memuse_core.views import span as span_view
from memuse_core.views.common import StoreLocked, formatted, item_key, judge_label, judge_title
from memuse_core.vocab import JudgeKind
from memuse_core.wording import plural
from pages._nav import scroll_to
from pages._shared import (
    NOT_BUILT,
    WRITE_TIMEOUT,
    annotation_form,
    cached,
    db_path,
    from_url,
    link,
    md_code,
    md_escape,
    nav_seq,
    seed,
    sel,
    set_sel,
    show_text,
    text_columns,
    url,
    view_judge,
    write_url,
)
from pages._widgets import show_step


def render_cited(segments: list[span_view.Segment], span_id: str) -> None:
    """Rationale text, escaped, with every [S7] / [P3] citation a deep link."""
    out = []
    for s in segments:
        if s.kind is None:
            out.append(md_escape(s.text))
        else:
            param = "step" if s.kind == "S" else "source"
            out.append(f"[\\[{s.kind}{s.number}\\]]({url('span', span=span_id, **{param: s.number})})")
    st.markdown("".join(out))


def highlighted(lines: list[span_view.SharedLine]) -> str:
    """Markdown of placed text with the lines also present in the prior context highlighted."""
    out = []
    for line in lines:
        esc = md_escape(line.text) or "&#8203;"
        out.append(f":orange-background[{esc}]" if line.shared else esc)
    return "  \n".join(out)


def rejudge_when_free(req: judgment_view.RejudgeRequest) -> None:
    """Run a requested re-judge now, or every 2 s while another process holds the database."""

    @st.fragment(run_every=2.0)
    def attempt() -> None:
        try:
            with st.spinner(f"Re-judging with the {req.judge} judge…"):
                out = judgment_view.run_rejudge(db_path(), req, WRITE_TIMEOUT)
        except StoreLocked as e:
            st.warning(
                f"Re-judge queued: the database is busy ({md_escape(e)}). It starts as soon as the "
                "database is free; you can keep working."
            )
            return
        st.session_state.pop("sp_rejudge_req", None)
        st.session_state["sp_rejudged"] = out
        if out.result is not None:  # show the new judgment's attempts and transcript
            st.session_state["_sp_judgment_next"] = out.result.judgment_id
        st.rerun(scope="app")  # the history and the verdict are read again, the new one marked

    attempt()


st.title("Span inspector")
# A citation in the URL (a followed [S12] link, a pasted deep link) picks the cited evidence.
from_url("source", "sp_cite", cast=lambda v: f"P{int(v)}", marker="span:source")
from_url("step", "sp_cite", cast=lambda v: f"S{int(v)}", marker="span:step")

episode = sel("episode")
choices = cached(span_view.span_choices, episode) if episode else []
seed("sp_span", "span")
if not st.session_state.get("sp_span") and choices:
    st.session_state["sp_span"] = choices[0]
c1, c2 = st.columns([2, 3])
span_id = c1.text_input("Span id", key="sp_span", help="`<episode_id>/<first delivery_id>`")
if choices:
    pick = c2.selectbox(
        "Spans of the selected episode",
        [None, *choices],
        key="sp_pick",
        format_func=lambda s: "—" if s is None else s,
    )
    if pick and pick != span_id and st.session_state.get("_sp_last_pick") != pick:
        st.session_state["_sp_last_pick"] = pick
        set_sel(span=pick)
        st.session_state["_seed_sp_span"] = None
        st.rerun()
if not span_id:
    facts = cached(ep_facts.episode_facts, episode) if episode else None
    why = common.memory_note(facts.memory_state, facts.episode_id) if facts is not None else ""
    st.info(
        md_escape(why)
        if why
        else "Pick a span: paste its id, or choose an episode on the Timeline page first "
        "(spans exist once `memuse build` has run)."
    )
    st.stop()
sv = cached(span_view.span, span_id, view_judge())
if sv is None:
    if cached(common.build_complete):  # built: the id itself is wrong
        st.warning(
            f"Span {md_code(span_id)} is not in the database: check the id (the Timeline and the "
            "Overview list every span)."
        )
    else:
        st.warning(f"Span {md_code(span_id)} is not in the database ({NOT_BUILT}).")
    st.stop()
h = sv.header
set_sel(span=span_id, episode=h.episode_id)
st.markdown(
    f"**{md_escape(span_id)}** · status `{h.status}` · outcome **{h.outcome}** ({judge_label(h.judge)}) · {h.steps} · "
    f"form {md_code(h.form or '—')} · route `{h.route or '—'}` · {plural(h.n_entries, 'entry')} · "
    f"{h.restatements} restatements · ≈{h.est_tokens} tokens"
    + (f" · reason: {md_escape(h.reason)}" if h.reason else "")
)
lc1, lc2, _ = st.columns([1, 1, 3])
with lc1:
    link("timeline", "Open in timeline", episode=h.episode_id, step=h.first_step)
with lc2:
    link("cases", "Case studies")

# ---- Exposed text beside the prior context -------------------------------------------------
st.subheader("Exposed text and prior context")
st.caption("Lines of the delivered memory that the agent could already see are highlighted (MemUse 3.3).")
left, right = st.columns(2)
with left:
    st.markdown("**Target delivery (verbatim placements)**")
    for p in sv.placements:
        st.caption(f"placement {p.pos} · {p.slot} · {p.kind} · message {p.message_index}")
        if p.lines is None:
            st.caption(f"(redacted, {p.size} chars)")
        else:
            with st.container(height=320):
                st.markdown(highlighted(p.lines))
with right:
    st.markdown("**Prior context B_S (target cut out)**")
    if not sv.prior:
        st.info(f"Prior context: {NOT_BUILT}.")
    with st.container(height=420):
        for s in sv.prior:
            st.markdown(f"**[P{s.pos}]** {md_escape(s.role)} · message {s.message_index} · {s.chars} chars")
            show_text(s.text, max_chars=4000)

# ---- Entries and signals --------------------------------------------------------------------
st.subheader(judge_title("Entries, signals and usage labels", h.judge))
entries = sv.entries.copy()
if sv.judged:
    entries["lineage"] = [
        url("lineage", item=item_key(ns, iid)) for ns, iid in zip(entries["namespace"], entries["item_id"])
    ]
    st.dataframe(
        formatted(entries, {}),
        hide_index=True,
        key="sp_entries",
        column_config={"lineage": st.column_config.LinkColumn("item history", display_text="lineage")},
    )
else:
    st.dataframe(formatted(entries, {}), hide_index=True, key="sp_entries")
    st.info("No accepted judgment for this span yet — run `memuse judge` or use Re-judge below.")
with st.expander("Exposed text of each entry"):
    for e in sv.entry_texts:
        st.markdown(f"**#{e.pos}** {md_code(e.item_id)} · {e.exposure}")
        show_text(e.exposed_text if e.exposed_text is not None else "(unknown exposure)", max_chars=4000)

# ---- Rationales with clickable citations ----------------------------------------------------
if sv.judged:
    st.subheader(judge_title("Rationales", h.judge))
    if sv.summary:
        st.markdown("**Span summary**")
        render_cited(sv.summary, span_id)
    for r in sv.rationales:
        if r.harmful:
            st.markdown(f"**#{r.pos}** {md_code(r.item_id)} · :red[harmed]")
            link("lineage", "Drill into this harmful item", item=item_key(r.namespace, r.item_id))
        else:
            st.markdown(f"**#{r.pos}** {md_code(r.item_id)} · {r.usage_label or '—'}")
        render_cited(r.notes, span_id)
current_cite = st.session_state.get("sp_cite")
if sv.citations or current_cite:
    st.markdown("**Cited evidence** — pick a citation to read it here")
    opts = sv.citations if current_cite in sv.citations or not current_cite else [current_cite, *sv.citations]
    cite = st.pills("Citations", opts, key="sp_cite", label_visibility="collapsed")
    if cite:
        kind, n = cite[0], int(cite[1:])
        if kind == "S":
            set_sel(step=n)
            txt = cached(common.step_text, h.episode_id, n)
            with st.container(border=True, key="sp_cited_step"):
                if txt is None:
                    st.warning(f"Step {n} not found.")
                else:
                    show_step(txt, max_chars=6000)
            link("timeline", f"Open S{n} in the timeline", episode=h.episode_id, step=n)
        else:
            src = next((s for s in sv.prior if s.pos == n), None)
            with st.container(border=True, key="sp_cited_step"):
                if src is None:
                    st.warning(f"Prior source P{n} not found.")
                else:
                    st.markdown(f"**[P{n}]** {md_escape(src.role)} · message {src.message_index}")
                    show_text(src.text)
        # Bring the cited evidence into view once per citation picked (a click, a followed link).
        scroll_to(".st-key-sp_cited_step", f"{span_id}|{cite}|{nav_seq()}", key="sp_scroll")

# ---- Judge transcript and history -----------------------------------------------------------
st.subheader("Judgment history")
if not len(sv.judgments):
    st.info("Never judged.")
else:
    st.dataframe(
        formatted(sv.judgments, span_view.HISTORY_FORMATS),
        hide_index=True,
        key="sp_history",
        column_config={
            "current": st.column_config.CheckboxColumn("current", help="The judgment behind the verdict."),
        }
        | text_columns(span_view.HISTORY_FORMATS),
    )
    kinds = dict(zip(sv.judgments["judgment_id"], zip(sv.judgments["judge"], sv.judgments["status"])))
    ids = list(kinds)
    if st.session_state.get("_sp_judgment_next") in ids:
        st.session_state["sp_judgment"] = st.session_state.pop("_sp_judgment_next")
    if st.session_state.get("sp_judgment") not in ids:
        st.session_state["sp_judgment"] = sv.current_judgment if sv.current_judgment in ids else ids[0]
    current = sv.current_judgment
    jid = st.selectbox(
        "Judgment",
        ids,
        key="sp_judgment",
        format_func=lambda j: f"{j} ({kinds[j][0]}, {kinds[j][1]})" + (" · current" if j == current else ""),
    )
    det = cached(judgment_view.detail, jid) if jid else None
    if det is not None:
        st.markdown(
            f"**Validation attempts**: {len(det.attempts)} · follow-ups {det.followups} · "
            f"final answer forced: {'yes' if det.forced else 'no'} · calls {det.calls}"
        )
        for i, att in enumerate(det.attempts):
            title = f"Attempt {i + 1}: {'accepted' if att.accepted else 'rejected'}"
            with st.expander(title + (" (forced)" if att.forced else "")):
                for v in att.violations:
                    st.markdown("- " + md_escape(v))
                if att.coerced:
                    st.markdown("Set to undetermined: " + md_escape(", ".join(att.coerced)))
        with st.expander(f"Transcript ({len(det.transcript)} messages)"):
            for m in det.transcript:
                st.markdown(f"**{md_escape(m.role)}**" + (f" · tool {md_code(m.name)}" if m.name else ""))
                if m.content:
                    show_text(m.content, max_chars=8000)
                for call in m.tool_calls:
                    show_text(call, max_chars=4000)

# ---- Re-judge (settings live in the sidebar, app.py) ----------------------------------------
st.subheader("Re-judge this span")
judge: JudgeKind = "llm" if st.session_state.get("judge_kind") == "llm" else "rules"
if not h.judgeable:
    st.caption(f"Only eligible spans are judged (this one is {h.status}).")
elif st.button(f"Re-judge with the {judge} judge", key="sp_rejudge", type="primary"):
    st.session_state.pop("sp_rejudged", None)
    st.session_state["sp_rejudge_req"] = judgment_view.RejudgeRequest(
        span_id=span_id,
        judge=judge,
        model=st.session_state.get("judge_model") or None,
        base_url=st.session_state.get("judge_base_url") or None,
    )
req = st.session_state.get("sp_rejudge_req")
if isinstance(req, judgment_view.RejudgeRequest) and req.span_id == span_id:
    rejudge_when_free(req)
done = st.session_state.get("sp_rejudged")
if isinstance(done, judgment_view.RejudgeOutcome) and done.request.span_id == span_id:
    if done.ok and done.result is not None:
        st.success(f"New judgment {done.result.judgment_id} accepted; it is now the current judgment.")
    else:
        st.error(done.error)
    if done.result is not None:
        before, after = st.columns(2)
        before.markdown("**Before**")
        before.dataframe(formatted(done.result.before, {}), hide_index=True, key="sp_old")
        after.markdown("**After**" + ("" if done.ok else " (not accepted: the verdict is unchanged)"))
        after.dataframe(formatted(done.result.after, {}), hide_index=True, key="sp_new")

with st.expander("Annotate this span"):
    annotation_form("span", span_id, h.episode_id, key="sp")
_cite = st.session_state.get("sp_cite") or ""
write_url(
    span=span_id,
    episode=h.episode_id,
    item=None,
    step=_cite[1:] if _cite.startswith("S") else None,
    source=_cite[1:] if _cite.startswith("P") else None,
)
