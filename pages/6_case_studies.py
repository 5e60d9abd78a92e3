"""Case studies: annotate any step, span or item; collect annotations into a named case study;
export it as one self-contained HTML file or Markdown; import a file back; human-vs-judge
agreement per signal with Cohen's kappa."""

from __future__ import annotations

import streamlit as st

from memuse_core.views import case_studies as cs_view
from memuse_core.views import writes
from memuse_core.views.common import display_name, formatted, judge_label, judge_title
from memuse_core.wording import plural
from pages._shared import (
    PAGES,
    annotation_form,
    cached,
    from_url,
    md_code,
    md_escape,
    note_md,
    sel,
    submit,
    view_judge,
    write_notice,
    write_url,
)

st.title("Case studies")
write_notice()

# ---- Create a case study and annotate anything -----------------------------------------------
cases = cached(cs_view.case_studies)
names = {c.case_study_id: c.name for c in cases}
with st.expander("New case study", expanded=not cases):
    with st.form("cs_new", clear_on_submit=True):
        name = st.text_input("Name", key="cs_new_name")
        desc = st.text_area("Description (markdown)", key="cs_new_desc")
        if st.form_submit_button("Create case study") and name.strip():
            study = cs_view.CaseStudy(name=name.strip(), description=desc)
            if submit(writes.case_study_write(study)):
                st.session_state["_cs_pick_next"] = study.case_study_id
                st.rerun()

with st.expander("Annotate a step, span or item"):
    kind = st.radio("Target", cs_view.TARGET_KINDS, horizontal=True, key="cs_target_kind")
    default = {
        "span": sel("span"),
        "item": sel("item"),
        "episode": sel("episode"),
        "step": f"{sel('episode')}#S{sel('step')}" if sel("episode") and sel("step") else None,
    }[kind]
    target = st.text_input(
        "Target id",
        value=default or "",
        key=f"cs_target_{kind}",
        help="span: `<span_id>` or `<span_id>#<entry pos>`; step: `<episode_id>#S<step>`; "
        "item: `<namespace>::<item_id>`",
    )
    if target:
        annotation_form(kind, target, cs_view.target_episode(kind, target), key=f"cs_{kind}")

# ---- Annotations and collection -------------------------------------------------------------
st.subheader("Annotations")
anns = cached(cs_view.annotation_list)
if not anns.annotations:
    st.info(
        "No annotations yet. Annotate a step on the Timeline page, a span in the Span inspector, "
        "an item on the Lineage page, or above."
    )
else:
    ev = st.dataframe(
        formatted(anns.table, {}),
        hide_index=True,
        key="cs_anns",
        on_select="rerun",
        selection_mode="multi-row",
    )
    chosen = [anns.annotations[i].annotation_id for i in (ev.selection.rows if ev is not None else [])]
    if chosen and cases:
        c1, c2 = st.columns([3, 1])
        into = c1.selectbox(
            "Collect the selected annotations into",
            list(names),
            format_func=lambda c: names.get(c, c),
            key="cs_collect_into",
        )
        if c2.button(f"Collect {len(chosen)}", key="cs_collect") and submit(
            writes.collect_write(chosen, into)
        ):
            st.rerun()
        if c2.button(f"Delete {len(chosen)}", key="cs_delete") and submit(writes.delete_write(chosen)):
            st.rerun()

# ---- One case study: view and export ---------------------------------------------------------
st.subheader("Case study")
if not cases:
    st.caption("Create a case study to collect annotations.")
else:
    from_url("case", "cs_pick", options=list(names))
    if st.session_state.get("_cs_pick_next") in names:
        st.session_state["cs_pick"] = st.session_state.pop("_cs_pick_next")
    if st.session_state.get("cs_pick") not in names:
        st.session_state["cs_pick"] = cases[0].case_study_id
    pick = str(
        st.selectbox(
            "Case study", list(names), format_func=lambda c: display_name(names.get(c, c)), key="cs_pick"
        )
    )
    write_url(case=pick)
    view = cached(cs_view.case_study, pick)
    if view is not None:
        st.markdown(f"**{md_escape(view.case.name)}** · {plural(len(view.members), 'annotation')}")
        if view.case.description:
            st.markdown(note_md(view.case.description))
        for m in view.members:
            a = m.annotation
            with st.container(border=True):
                tags = " · tags: " + ", ".join(md_escape(t) for t in a.tags) if a.tags else ""
                st.markdown(f"**{md_escape(a.target_kind)}** {md_code(a.target_id)}{tags}")
                if a.labels:
                    st.caption(" · ".join(f"{k}: {md_escape(v)}" for k, v in a.labels.items()))
                if a.note:
                    st.markdown(note_md(a.note))
                if m.link is not None:
                    st.page_link(PAGES[m.link.page], label=m.link.label, query_params=m.link.params)
        if view.members and st.button("Prepare export (HTML and Markdown)", key="cs_prepare"):
            with st.spinner("Rendering the case study…"):
                st.session_state["cs_export"] = cached(cs_view.export, pick, view_judge())
        exp = st.session_state.get("cs_export")
        if isinstance(exp, cs_view.Export) and exp.case_study_id == pick:
            c1, c2 = st.columns(2)
            c1.download_button(
                "Download HTML",
                exp.html,
                file_name=f"{exp.filename}.html",
                mime="text/html",
                key="cs_dl_html",
                on_click="ignore",
            )
            c2.download_button(
                "Download Markdown",
                exp.markdown,
                file_name=f"{exp.filename}.md",
                mime="text/markdown",
                key="cs_dl_md",
                on_click="ignore",
            )
            st.caption(
                f"HTML: {len(exp.html) / 1e6:.1f} MB, self-contained (plotly inline, no network); "
                f"timelines from the {judge_label(exp.judge)}'s verdicts."
            )

# ---- Import ----------------------------------------------------------------------------------
st.subheader("Import a case-study file")
up = st.file_uploader("Exported HTML or Markdown", type=["html", "htm", "md"], key="cs_upload")
if up is not None and st.session_state.get("_cs_imported") != up.file_id:
    try:
        doc = cs_view.read_case_study_file(up.getvalue().decode("utf-8", errors="replace"), up.name)
    except cs_view.CaseStudyError as e:
        st.error(str(e))
    else:
        if submit(writes.import_write(doc)):
            st.session_state["_cs_imported"] = up.file_id
            st.session_state["_cs_pick_next"] = doc.case_study_id
            st.success(f"Imported {doc.name!r} with {plural(len(doc.annotations), 'annotation')}.")
            st.rerun()

# ---- Judge agreement -------------------------------------------------------------------------
agreement = cached(cs_view.agreement, view_judge())
st.subheader(judge_title("Human vs judge agreement", agreement.judge))
if not agreement.entries:
    st.caption(
        "Give span annotations human labels (target `<span_id>#<entry pos>`) to compare them with the judge."
    )
else:
    st.dataframe(
        agreement.table,
        hide_index=True,
        key="cs_agreement",
        column_config={
            "agreement": st.column_config.NumberColumn(format="percent"),
            "kappa": st.column_config.NumberColumn("Cohen's κ", format="%.3f"),
        },
    )
    st.caption(
        f"{agreement.entries} labelled entries; κ is undefined (blank) when there are no pairs or chance "
        "agreement is 1."
    )
