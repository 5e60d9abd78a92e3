"""Case studies: annotate any step, span or item; collect annotations into a named case study;
export it as one self-contained HTML file or Markdown; import a file back; human-vs-judge
agreement per signal with Cohen's kappa."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import streamlit as st

from memuse_core import casestudy as CS
from memuse_core import timeline as TL
from pages._shared import annotation_form, md_code, md_escape, note_md, q, sel, split_item, write

st.title("Case studies")

# ---- Create a case study and annotate anything -----------------------------------------------
cases = q("list_case_studies")
with st.expander("New case study", expanded=not len(cases)):
    with st.form("cs_new", clear_on_submit=True):
        name = st.text_input("Name", key="cs_new_name")
        desc = st.text_area("Description (markdown)", key="cs_new_desc")
        if st.form_submit_button("Create case study") and name.strip():
            cs = CS.CaseStudy(name=name.strip(), description=desc)
            if write(
                "upsert_case_study",
                {
                    "case_study_id": cs.case_study_id,
                    "name": cs.name,
                    "description": cs.description,
                    "created_at": cs.created_at,
                },
            ):
                st.session_state["cs_pick"] = cs.case_study_id
                st.rerun()

with st.expander("Annotate a step, span or item"):
    kind = st.radio("Target", ["span", "step", "item", "episode"], horizontal=True, key="cs_target_kind")
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
        ep = target.split("#", 1)[0].split("/", 1)[0] if kind in ("span", "step", "episode") else None
        annotation_form(kind, target, ep, key=f"cs_{kind}")

# ---- Annotations and collection -------------------------------------------------------------
st.subheader("Annotations")
anns = q("list_annotations")
if not len(anns):
    st.info(
        "No annotations yet. Annotate a step on the Timeline page, a span in the Span inspector, "
        "an item on the Lineage page, or above."
    )
else:
    names = dict(zip(cases["case_study_id"], cases["name"])) if len(cases) else {}
    view = anns.copy()
    view["case study"] = [names.get(c, "—") if isinstance(c, str) else "—" for c in view["case_study_id"]]
    view["labels"] = [
        ", ".join(f"{k}={v}" for k, v in json.loads(x).items()) if isinstance(x, str) else ""
        for x in view["labels"]
    ]
    ev = st.dataframe(
        view.drop(columns=["case_study_id"]),
        hide_index=True,
        key="cs_anns",
        on_select="rerun",
        selection_mode="multi-row",
    )
    chosen = [view.iloc[i]["annotation_id"] for i in (ev.selection.rows if ev is not None else [])]
    if chosen and len(cases):
        c1, c2 = st.columns([3, 1])
        target_case = c1.selectbox(
            "Collect the selected annotations into",
            list(cases["case_study_id"]),
            format_func=lambda c: names.get(c, c),
            key="cs_collect_into",
        )
        if c2.button(f"Collect {len(chosen)}", key="cs_collect"):
            if write("assign_annotations", chosen, target_case):
                st.rerun()
        if c2.button(f"Delete {len(chosen)}", key="cs_delete"):
            for a in chosen:
                write("delete_annotation", a)
            st.rerun()


# ---- One case study: view and export ---------------------------------------------------------
def _excerpt_and_figure(a: pd.Series) -> tuple[str | None, object | None]:
    """Recorded text and a timeline figure to show with an annotation in the export."""
    kind, tid = a["target_kind"], str(a["target_id"])
    if kind == "step" and "#S" in tid:
        eid, step = tid.rsplit("#S", 1)
        txt = q("step_text", eid, int(step)) if step.isdigit() else None
        if txt is None:
            return None, None
        body = (
            txt["response"]
            + "".join(f"\n\n$ {n}: {a_}" for n, a_ in txt["tool_calls"])
            + "".join(f"\n\n[{r['name']} exit {r['exit_code']}]\n{r['output']}" for r in txt["results"])
        )
        steps = q("episode_steps", eid)
        fig = TL.episode_timeline(
            steps.to_dict("records"),
            q("episode_entries", eid).to_dict("records"),
            q("episode_deliveries", eid).to_dict("records"),
            selected_step=int(step),
            title=f"{eid} · S{step}",
        )
        return body[:20000], fig
    if kind == "span":
        sid = tid.split("#", 1)[0]
        span = q("span_row", sid)
        if span is None:
            return None, None
        ents = q("span_entries", sid)
        body = "\n\n".join(
            f"#{e['pos']} {e['item_id']} ({e['exposure']}): {e['exposed_text'] or ''}"
            for _, e in ents.iterrows()
        )
        eid = span["episode_id"]
        fig = TL.episode_timeline(
            q("episode_steps", eid).to_dict("records"),
            [r for r in q("episode_entries", eid).to_dict("records") if r["span_id"] == sid],
            q("episode_deliveries", eid).to_dict("records"),
            title=f"{sid}",
        )
        return body[:20000], fig
    if kind == "item":
        ns, iid = split_item(tid)
        hist = q("item_history", ns, iid)
        vals = [v for v in hist["value"] if v] if len(hist) else []
        return (vals[-1][:20000] if vals else None), None
    return None, None


st.subheader("Case study")
if not len(cases):
    st.caption("Create a case study to collect annotations.")
else:
    qcase = st.query_params.get("case")
    if qcase in list(cases["case_study_id"]) and st.session_state.get("_cs_case_seen") != qcase:
        st.session_state["_cs_case_seen"] = qcase
        st.session_state["_cs_pick_next"] = qcase
    if st.session_state.get("_cs_pick_next") in list(cases["case_study_id"]):
        st.session_state["cs_pick"] = st.session_state.pop("_cs_pick_next")
    if st.session_state.get("cs_pick") not in list(cases["case_study_id"]):
        st.session_state["cs_pick"] = cases.iloc[0]["case_study_id"]
    names = dict(zip(cases["case_study_id"], cases["name"]))
    pick = st.selectbox(
        "Case study", list(cases["case_study_id"]), format_func=lambda c: names.get(c, c), key="cs_pick"
    )
    st.query_params["case"] = pick
    st.session_state["_cs_case_seen"] = pick
    row = cases[cases["case_study_id"] == pick].iloc[0]
    members = q("list_annotations", pick)
    st.markdown(f"**{md_escape(row['name'])}** · {len(members)} annotations")
    if row["description"]:
        st.markdown(note_md(row["description"]))
    for _, a in members.iterrows():
        with st.container(border=True):
            st.markdown(
                f"**{md_escape(a['target_kind'])}** {md_code(a['target_id'])}"
                + (
                    " · tags: " + ", ".join(md_escape(t) for t in a["tags"])
                    if a["tags"] is not None and len(a["tags"])
                    else ""
                )
            )
            labels = json.loads(a["labels"]) if isinstance(a["labels"], str) else {}
            if labels:
                st.caption(" · ".join(f"{k}: {v}" for k, v in labels.items()))
            if a["note"]:
                st.markdown(note_md(a["note"]))
            tid = str(a["target_id"])
            if a["target_kind"] == "span":
                st.page_link(
                    "pages/4_span.py", label="open span", query_params={"span": tid.split("#", 1)[0]}
                )
            elif a["target_kind"] == "step" and "#S" in tid:
                e, s = tid.rsplit("#S", 1)
                st.page_link("pages/3_timeline.py", label="open step", query_params={"episode": e, "step": s})
            elif a["target_kind"] == "item":
                st.page_link("pages/5_lineage.py", label="open item", query_params={"item": tid})
    if len(members) and st.button("Prepare export (HTML and Markdown)", key="cs_prepare"):
        with st.spinner("Rendering the case study…"):
            doc = CS.CaseStudy(
                case_study_id=pick,
                name=row["name"],
                description=row["description"] or "",
                created_at=row["created_at"] or dt.datetime.now(),
            )
            figures = {}
            for _, a in members.iterrows():
                ann = CS.Annotation(
                    annotation_id=a["annotation_id"],
                    target_kind=a["target_kind"],
                    target_id=a["target_id"],
                    episode_id=a["episode_id"],
                    note=a["note"] or "",
                    tags=list(a["tags"]) if a["tags"] is not None else [],
                    labels=json.loads(a["labels"]) if isinstance(a["labels"], str) else {},
                    author=a["author"],
                    case_study_id=pick,
                    created_at=a["created_at"],
                )
                doc.annotations.append(ann)
                ex, fig = _excerpt_and_figure(a)
                if ex:
                    doc.excerpts[ann.annotation_id] = ex
                if fig is not None:
                    figures[ann.annotation_id] = fig
            st.session_state["cs_export"] = {
                "id": pick,
                "html": CS.export_html(doc, figures),
                "md": CS.export_markdown(doc),
            }
    exp = st.session_state.get("cs_export")
    if exp and exp["id"] == pick:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in row["name"])[:60] or "case_study"
        c1, c2 = st.columns(2)
        c1.download_button(
            "Download HTML",
            exp["html"],
            file_name=f"{safe}.html",
            mime="text/html",
            key="cs_dl_html",
            on_click="ignore",
        )
        c2.download_button(
            "Download Markdown",
            exp["md"],
            file_name=f"{safe}.md",
            mime="text/markdown",
            key="cs_dl_md",
            on_click="ignore",
        )
        st.caption(f"HTML: {len(exp['html']) / 1e6:.1f} MB, self-contained (plotly inline, no network).")

# ---- Import ----------------------------------------------------------------------------------
st.subheader("Import a case-study file")
up = st.file_uploader("Exported HTML or Markdown", type=["html", "htm", "md"], key="cs_upload")
if up is not None and st.session_state.get("_cs_imported") != up.file_id:
    try:
        doc = CS.import_case_study(up.getvalue().decode("utf-8", errors="replace"), name=up.name)
    except CS.CaseStudyError as e:
        st.error(str(e))
    else:
        ok = write(
            "upsert_case_study",
            {
                "case_study_id": doc.case_study_id,
                "name": doc.name,
                "description": doc.description,
                "created_at": doc.created_at,
            },
        )
        for ann in doc.annotations:
            row_ = ann.row()
            row_["case_study_id"] = doc.case_study_id
            ok = ok and write("upsert_annotation", row_)
        if ok:
            st.session_state["_cs_imported"] = up.file_id
            st.session_state["_cs_pick_next"] = doc.case_study_id
            st.success(f"Imported {doc.name!r} with {len(doc.annotations)} annotations.")
            st.rerun()

# ---- Judge agreement -------------------------------------------------------------------------
st.subheader("Human vs judge agreement")
labelled = anns[(anns["target_kind"] == "span") & anns["labels"].notna()] if len(anns) else anns
pairs: list[tuple[str, int, dict]] = []
for _, a in labelled.iterrows() if len(labelled) else []:
    labels = json.loads(a["labels"]) if isinstance(a["labels"], str) else {}
    if not labels:
        continue
    sid, _, pos = str(a["target_id"]).partition("#")
    pairs.append((sid, int(pos) if pos.isdigit() else 0, labels))
if not pairs:
    st.caption(
        "Give span annotations human labels (target `<span_id>#<entry pos>`) to compare them with the judge."
    )
else:
    judge = q("judge_labels_for", [(s, p) for s, p, _ in pairs])
    jl = {(r["span_id"], int(r["pos"])): r for _, r in judge.iterrows()}
    rows = []
    for sid, pos, labels in pairs:
        jr = jl.get((sid, pos))
        if jr is None:
            continue
        for sig, hv in labels.items():
            rows.append((sig, hv, CS.judge_value(sig, jr[sig])))
    table = pd.DataFrame(CS.agreement_table(rows))
    st.dataframe(
        table,
        hide_index=True,
        key="cs_agreement",
        column_config={
            "agreement": st.column_config.NumberColumn(format="percent"),
            "kappa": st.column_config.NumberColumn("Cohen's κ", format="%.3f"),
        },
    )
    st.caption(
        f"{len(pairs)} labelled entries; κ is undefined (blank) when there are no pairs or chance "
        "agreement is 1."
    )
